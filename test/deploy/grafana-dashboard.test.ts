// The Grafana dashboard of deploy/grafana: well-formed, on one Prometheus data source variable,
// and querying only series the pipeline exports (read from its own registry), all of them.
import { beforeAll, describe, expect, it } from 'vitest';
import { pipelineMetricNames, queryableSeries, type Series } from './support/exported-series.ts';
import {
  dashboardProblems,
  dashboardQueries,
  readDashboard,
  type Dashboard,
} from './support/grafana-dashboard.ts';
import { promqlProblems, selectedMetrics } from './support/promql.ts';

let series: Map<string, Series>;
beforeAll(async () => {
  series = await queryableSeries();
});

const queryProblems = (dashboard: Dashboard): string[] =>
  dashboardQueries(dashboard).flatMap(({ where, expr }) =>
    promqlProblems(expr, series).map((problem) => `${where}: ${problem}`),
  );

/** A copy of the dashboard with one text replaced in the first panel query that has it. */
function withQueryEdited(from: string, to: string): Dashboard {
  const copy = readDashboard();
  const target = copy.panels
    .flatMap((panel) => panel.targets ?? [])
    .find((candidate) => candidate.expr?.includes(from));
  if (!target?.expr) throw new Error(`no query of the dashboard contains ${from}`);
  target.expr = target.expr.replace(from, to);
  return copy;
}

describe('deploy/grafana/partner-enrich.json', () => {
  it('is a recent dashboard whose every panel and query goes to its Prometheus data source variable, laid out without overlaps', () => {
    expect(dashboardProblems(readDashboard())).toEqual([]);
  });

  it('queries only series the pipeline exports, in PromQL that Prometheus parses', () => {
    const queries = dashboardQueries(readDashboard());
    expect(queries.length).toBeGreaterThan(30);
    expect(queryProblems(readDashboard())).toEqual([]);
  });

  it('shows every metric the pipeline registers', async () => {
    const shown = new Set(
      dashboardQueries(readDashboard()).flatMap(({ expr }) =>
        selectedMetrics(expr).map((name) => series.get(name)?.metric),
      ),
    );
    const registered = await pipelineMetricNames();
    expect(registered.length).toBeGreaterThan(20);
    expect(registered.filter((metric) => !shown.has(metric))).toEqual([]);
  });
});

describe('the dashboard checks (planted mistakes)', () => {
  it('reject a misspelt metric', () => {
    const dashboard = withQueryEdited('partner_enrich_records_in_total', 'partner_enrich_record_in_total');
    expect(queryProblems(dashboard)).toEqual([
      expect.stringContaining('partner_enrich_record_in_total is not a series the pipeline exports'),
    ]);
  });

  it('reject a histogram queried without its _bucket series', () => {
    const dashboard = withQueryEdited(
      'partner_enrich_bulk_latency_seconds_bucket',
      'partner_enrich_bulk_latency_seconds',
    );
    expect(queryProblems(dashboard)).toEqual([
      expect.stringContaining('partner_enrich_bulk_latency_seconds is not a series the pipeline exports'),
    ]);
  });

  it('reject rate() of a gauge', () => {
    const dashboard = withQueryEdited(
      'partner_enrich_bulk_submissions_total',
      'partner_enrich_tasks_in_flight',
    );
    expect(queryProblems(dashboard)).toEqual([
      expect.stringContaining('rate() of partner_enrich_tasks_in_flight, a gauge'),
    ]);
  });

  it('reject a query that does not parse', () => {
    const dashboard = withQueryEdited('[$__rate_interval]))', '[$__rate_interval])');
    expect(queryProblems(dashboard)).toEqual([expect.stringContaining('syntax error')]);
  });

  it('reject a variable selecting an unknown metric', () => {
    const dashboard = readDashboard();
    const job = dashboard.templating.list.find((variable) => variable.name === 'job');
    if (!job || typeof job.query !== 'object') throw new Error('the job variable has no query object');
    job.query.query = 'label_values(partner_enrich_records_total, job)';
    expect(queryProblems(dashboard)).toEqual([
      'variable job: partner_enrich_records_total is not a series the pipeline exports',
    ]);
  });

  it('reject a panel on another data source, and overlapping panels', () => {
    const dashboard = readDashboard();
    const [row, first, second] = dashboard.panels;
    if (!row || !first || !second) throw new Error('the dashboard has fewer than three panels');
    first.datasource = { type: 'prometheus', uid: 'P1809F7CD0C75ACF3' };
    second.gridPos = { ...first.gridPos };
    expect(dashboardProblems(dashboard)).toEqual([
      `panel ${second.id} "${second.title}": overlaps panel ${first.id}`,
      `panel ${first.id} "${first.title}": not on the data source variable`,
    ]);
  });
});
