// The alert rules of deploy/prometheus: the rule file's form, PromQL that parses and selects only
// series the pipeline exports, runbooks that exist, and the alert table of docs/OPERATIONS.md.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { headingAnchors, tableRows } from '../support/markdown.ts';
import { FAILURE_STAGES } from '../../src/pipeline/outputs.ts';
import { alertRuleProblems, ALERTS_FILE, ALERTS_TEST_FILE, readAlertGroups } from './support/alert-rules.ts';
import { queryableSeries, type Series } from './support/exported-series.ts';

const operations = readFileSync(new URL('../../docs/OPERATIONS.md', import.meta.url), 'utf8');
const runbooks = headingAnchors(operations);
const ruleFile = (): Record<string, unknown> =>
  parse(readFileSync(ALERTS_FILE, 'utf8')) as Record<string, unknown>;

let series: Map<string, Series>;
beforeAll(async () => {
  series = await queryableSeries();
});

/** The rule file with one change made to the named alert. */
function withAlertEdited(alert: string, edit: (rule: Record<string, unknown>) => void): unknown {
  const content = ruleFile() as { groups: { rules: Record<string, unknown>[] }[] };
  const rule = content.groups
    .flatMap((group) => group.rules)
    .find((candidate) => candidate['alert'] === alert);
  if (!rule) throw new Error(`no alert ${alert}`);
  edit(rule);
  return content;
}

describe('deploy/prometheus/alerts.yaml', () => {
  it('is a rule file of alerts with a severity, a summary, a description and a runbook in docs/OPERATIONS.md, selecting only series the pipeline exports', () => {
    expect(alertRuleProblems(ruleFile(), runbooks, series)).toEqual([]);
  });

  it('alerts on lag growing, dead letters growing, input not keyed by partner id, the quota exhausted, replicas not ready and restarts', () => {
    const groups = readAlertGroups().map((group) => group.name);
    expect(groups).toEqual([
      'partner-enrich.lag',
      'partner-enrich.dead-letters',
      'partner-enrich.input',
      'partner-enrich.quota',
      'partner-enrich.readiness',
      'partner-enrich.restarts',
    ]);
  });

  it('is the alert table of docs/OPERATIONS.md, with the same severities', () => {
    const documented = tableRows(operations)
      .filter(([name]) => /^`PartnerEnrich\w+`$/.test(name ?? ''))
      .map(([name = '', severity]) => [name.slice(1, -1), severity]);
    const rules = readAlertGroups()
      .flatMap((group) => group.rules)
      .map((rule) => [rule.alert, rule.labels['severity']]);
    expect(documented).toEqual(rules);
  });
});

describe('deploy/prometheus/alerts.test.yaml', () => {
  it('regression: it fed the dead-letter alerts reasons the pipeline never exports (reason="REFDATA_AUTH_FAILED", "MAPPING_INVALID_COUNTRY"; a run exports "mapping/MAPPING_INVALID_COUNTRY"); now every reason is <stage>/<code>', () => {
    const { tests } = parse(readFileSync(ALERTS_TEST_FILE, 'utf8')) as {
      tests: { input_series: { series: string }[] }[];
    };
    const reasons = tests
      .flatMap((test) => test.input_series)
      .filter(({ series }) => series.startsWith('partner_enrich_dead_letters_total{'))
      .map(({ series }) => /reason="([^"]*)"/.exec(series)?.[1]);
    expect(reasons.length).toBeGreaterThan(0);
    const exported = new RegExp(`^(${FAILURE_STAGES.join('|')})/[A-Z][A-Z0-9_]*$`);
    for (const reason of reasons) expect(reason).toMatch(exported);
  });
});

describe('the alert rule checks (planted mistakes)', () => {
  it('reject a misspelt metric', () => {
    const content = withAlertEdited('PartnerEnrichQuotaExhausted', (rule) => {
      rule['expr'] = String(rule['expr']).replace('quota_over_limit_total', 'quota_overlimit_total');
    });
    expect(alertRuleProblems(content, runbooks, series)).toEqual([
      'PartnerEnrichQuotaExhausted: partner_enrich_quota_overlimit_total is not a series the pipeline exports',
    ]);
  });

  it('reject an alert without a severity, and one with an unknown severity', () => {
    const content = withAlertEdited('PartnerEnrichDown', (rule) => {
      rule['labels'] = {};
    });
    const other = withAlertEdited('PartnerEnrichRestarting', (rule) => {
      rule['labels'] = { severity: 'page' };
    });
    expect(alertRuleProblems(content, runbooks, series)).toEqual([
      'PartnerEnrichDown: severity is not one of warning, critical',
    ]);
    expect(alertRuleProblems(other, runbooks, series)).toEqual([
      'PartnerEnrichRestarting: severity is not one of warning, critical',
    ]);
  });

  it('reject a runbook that is not a section of docs/OPERATIONS.md', () => {
    const content = withAlertEdited('PartnerEnrichDeadLettersGrowing', (rule) => {
      rule['annotations'] = {
        ...(rule['annotations'] as object),
        runbook_url: 'docs/OPERATIONS.md#dlq-growing',
      };
    });
    expect(alertRuleProblems(content, runbooks, series)).toEqual([
      'PartnerEnrichDeadLettersGrowing: runbook_url is not a section of docs/OPERATIONS.md: docs/OPERATIONS.md#dlq-growing',
    ]);
  });

  it('reject a missing annotation, a malformed duration and a field Prometheus does not know', () => {
    const content = withAlertEdited('PartnerEnrichNotReady', (rule) => {
      rule['annotations'] = { summary: 'x', runbook_url: 'docs/OPERATIONS.md#not-ready' };
      rule['for'] = '10 minutes';
      rule['severity'] = 'critical';
    });
    expect(alertRuleProblems(content, runbooks, series)).toEqual([
      'PartnerEnrichNotReady: unknown field severity',
      'PartnerEnrichNotReady: for is not a duration: 10 minutes',
      'PartnerEnrichNotReady: no description annotation',
    ]);
  });

  it('reject a file without groups, and an expression that does not parse', () => {
    expect(alertRuleProblems({ rules: [] }, runbooks, series)).toEqual(['no groups']);
    const content = withAlertEdited('PartnerEnrichStateRestoreSlow', (rule) => {
      rule['expr'] = 'partner_enrich_state_restoring = 1';
    });
    expect(alertRuleProblems(content, runbooks, series)).toEqual([
      expect.stringMatching(/^PartnerEnrichStateRestoreSlow: syntax error/),
    ]);
  });
});
