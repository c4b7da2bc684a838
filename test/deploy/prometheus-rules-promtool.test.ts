// Prometheus' own checker on the alert rules and the dashboard's queries: promtool (from
// Debian's prometheus package, fetched once into the cache) parses the rule file, runs its
// unit tests (deploy/prometheus/alerts.test.yaml: every alert fires on the series that should
// raise it, with its annotations as written, and not on a healthy look-alike), and parses
// every dashboard query as a recording rule.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { ALERTS_FILE, ALERTS_TEST_FILE, readAlertGroups } from './support/alert-rules.ts';
import { dashboardQueries, readDashboard } from './support/grafana-dashboard.ts';
import { withGrafanaDurations } from './support/promql.ts';
import { fetchPromtool, promtool } from './support/promtool.ts';

const scratch = mkdtempSync(join(tmpdir(), 'partner-enrich-promtool-'));

interface UnitTests {
  tests: { alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }[];
}

/** A rule file of recording rules, one per expression, for promtool to parse. */
function recordingRules(name: string, exprs: string[]): string {
  const path = join(scratch, `${name}.yaml`);
  const rules = exprs.map((expr, index) => ({ record: `partner_enrich:${name}:${index}`, expr }));
  writeFileSync(path, stringify({ groups: [{ name, rules }] }));
  return path;
}

let binary: string;
beforeAll(async () => {
  binary = await fetchPromtool();
}, 300_000);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('promtool on deploy/prometheus and deploy/grafana', () => {
  it('accepts the alert rule file', async () => {
    const rules = readAlertGroups().flatMap((group) => group.rules).length;
    const { code, output } = await promtool(binary, ['check', 'rules', fileURLToPath(ALERTS_FILE)]);
    expect(output).toContain(`SUCCESS: ${rules} rules found`);
    expect(code).toBe(0);
  });

  it('passes the rules unit tests, which make every alert fire', async () => {
    const { code, output } = await promtool(binary, ['test', 'rules', fileURLToPath(ALERTS_TEST_FILE)]);
    expect(output).toContain('SUCCESS');
    expect(code).toBe(0);
    const tested = (parse(readFileSync(ALERTS_TEST_FILE, 'utf8')) as UnitTests).tests
      .flatMap((test) => test.alert_rule_test ?? [])
      .filter((check) => check.exp_alerts.length > 0)
      .map((check) => check.alertname);
    const alerts = readAlertGroups().flatMap((group) => group.rules.map((rule) => rule.alert));
    expect(alerts.filter((alert) => !tested.includes(alert))).toEqual([]);
  });

  it('parses every query of the dashboard', async () => {
    const exprs = dashboardQueries(readDashboard()).map(({ expr }) => withGrafanaDurations(expr));
    const { code, output } = await promtool(binary, ['check', 'rules', recordingRules('dashboard', exprs)]);
    expect(output).toContain(`SUCCESS: ${exprs.length} rules found`);
    expect(code).toBe(0);
  });
});

describe('promtool (planted mistakes)', () => {
  it('rejects an expression that does not parse', async () => {
    const path = recordingRules('broken', ['sum(rate(partner_enrich_records_in_total[5m])']);
    const { code, output } = await promtool(binary, ['check', 'rules', path]);
    expect(code).not.toBe(0);
    expect(output).toContain('unclosed left parenthesis');
  });

  it('fails a unit test whose alert does not fire as expected', async () => {
    const tests = parse(readFileSync(ALERTS_TEST_FILE, 'utf8')) as UnitTests & { rule_files: string[] };
    tests.rule_files = [fileURLToPath(ALERTS_FILE)];
    const [first] = tests.tests;
    const [check] = first?.alert_rule_test?.filter((candidate) => candidate.exp_alerts.length > 0) ?? [];
    if (!check) throw new Error('the first unit test expects no alert');
    check.exp_alerts = [];
    const path = join(scratch, 'planted.test.yaml');
    writeFileSync(path, stringify(tests));
    const { code, output } = await promtool(binary, ['test', 'rules', path]);
    expect(code).not.toBe(0);
    expect(output).toContain(`alertname: ${check.alertname}`);
  });
});
