// The form of a Prometheus alerting rule file (groups[].rules[] of alert, expr, for, labels,
// annotations) as partner-enrich writes its rules: a severity on every alert, and a summary,
// a description and a runbook in docs/OPERATIONS.md on every one.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { Series } from './exported-series.ts';
import { promqlProblems } from './promql.ts';

export interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export interface RuleGroup {
  name: string;
  rules: AlertRule[];
}

export const ALERTS_FILE = new URL('../../../deploy/prometheus/alerts.yaml', import.meta.url);
export const ALERTS_TEST_FILE = new URL('../../../deploy/prometheus/alerts.test.yaml', import.meta.url);

export const readAlertGroups = (): RuleGroup[] =>
  (parse(readFileSync(ALERTS_FILE, 'utf8')) as { groups: RuleGroup[] }).groups;

export const SEVERITIES = ['warning', 'critical'];
const RULE_KEYS = new Set(['alert', 'expr', 'for', 'labels', 'annotations']);
const ANNOTATIONS = ['summary', 'description', 'runbook_url'];
/** Prometheus' duration syntax, e.g. `15m`, `1h30m`. */
const DURATION = /^(?:\d+(?:ms|s|m|h|d|w|y))+$/;
const RUNBOOK = /(?:^|\/)docs\/OPERATIONS\.md#([a-z0-9-]+)$/;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * What is wrong with the rule file's content; empty when nothing is. `runbooks` are the
 * anchors of docs/OPERATIONS.md, `series` what the expressions may select.
 */
export function alertRuleProblems(
  content: unknown,
  runbooks: ReadonlySet<string>,
  series: ReadonlyMap<string, Series>,
): string[] {
  if (!isObject(content) || !Array.isArray(content['groups']) || content['groups'].length === 0)
    return ['no groups'];
  const problems: string[] = [];
  const names = new Set<string>();
  const alerts = new Set<string>();
  for (const [index, group] of content['groups'].entries()) {
    if (!isObject(group) || typeof group['name'] !== 'string') {
      problems.push(`group ${index}: no name`);
      continue;
    }
    const where = `group ${group['name']}`;
    if (names.has(group['name'])) problems.push(`${where}: its name is not unique`);
    names.add(group['name']);
    const rules = group['rules'];
    if (!Array.isArray(rules) || rules.length === 0) {
      problems.push(`${where}: no rules`);
      continue;
    }
    for (const rule of rules as unknown[])
      problems.push(...ruleProblems(rule, where, alerts, runbooks, series));
  }
  return problems;
}

function ruleProblems(
  rule: unknown,
  group: string,
  alerts: Set<string>,
  runbooks: ReadonlySet<string>,
  series: ReadonlyMap<string, Series>,
): string[] {
  if (!isObject(rule) || typeof rule['alert'] !== 'string') return [`${group}: a rule that is not an alert`];
  const name = rule['alert'];
  const problems: string[] = [];
  const problem = (text: string) => problems.push(`${name}: ${text}`);
  if (!/^PartnerEnrich[A-Z][A-Za-z]+$/.test(name)) problem('not named PartnerEnrich<What>');
  if (alerts.has(name)) problem('the name is not unique');
  alerts.add(name);
  for (const key of Object.keys(rule)) if (!RULE_KEYS.has(key)) problem(`unknown field ${key}`);
  if (typeof rule['expr'] !== 'string' || !rule['expr'].trim()) problem('no expr');
  else for (const found of promqlProblems(rule['expr'], series)) problem(found);
  if (rule['for'] !== undefined && !(typeof rule['for'] === 'string' && DURATION.test(rule['for'])))
    problem(`for is not a duration: ${String(rule['for'])}`);
  const labels = isObject(rule['labels']) ? rule['labels'] : {};
  if (!SEVERITIES.includes(String(labels['severity'])))
    problem(`severity is not one of ${SEVERITIES.join(', ')}`);
  const annotations = isObject(rule['annotations']) ? rule['annotations'] : {};
  for (const key of ANNOTATIONS)
    if (typeof annotations[key] !== 'string' || !annotations[key].trim()) problem(`no ${key} annotation`);
  const anchor = RUNBOOK.exec(String(annotations['runbook_url'] ?? ''))?.[1];
  if (annotations['runbook_url'] !== undefined && !(anchor && runbooks.has(anchor)))
    problem(`runbook_url is not a section of docs/OPERATIONS.md: ${String(annotations['runbook_url'])}`);
  return problems;
}
