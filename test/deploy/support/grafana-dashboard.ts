// The parts of a Grafana dashboard (classic JSON model) the checks read, and the checks of its
// form: one Prometheus data source variable that every query goes to, and a grid layout
// Grafana can show as written.
import { readFileSync } from 'node:fs';

export interface DataSourceRef {
  type?: string;
  uid?: string;
}

export interface Target {
  refId: string;
  expr?: string;
  datasource?: DataSourceRef;
}

export interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { h: number; w: number; x: number; y: number };
  datasource?: DataSourceRef;
  targets?: Target[];
  /** A collapsed row keeps its panels here. */
  panels?: Panel[];
}

export interface Variable {
  type: string;
  name: string;
  query?: string | { query: string };
  datasource?: DataSourceRef;
}

export interface Dashboard {
  uid: string;
  title: string;
  schemaVersion: number;
  templating: { list: Variable[] };
  panels: Panel[];
}

/** Grafana 11's classic schema; older ones are migrated on load and lack what this one uses. */
export const MIN_SCHEMA_VERSION = 39;
const GRID_COLUMNS = 24;

export const DASHBOARD_FILE = new URL('../../../deploy/grafana/partner-enrich.json', import.meta.url);

export const readDashboard = (): Dashboard => JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as Dashboard;

/** Every panel, those inside collapsed rows too. */
export const allPanels = (dashboard: Dashboard): Panel[] =>
  dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]);

/** `label_values(<selector>, <label>)`, the variable query of Grafana's Prometheus data source. */
const LABEL_VALUES = /^label_values\((.+),\s*[a-zA-Z_]\w*\)$/s;

export interface Query {
  /** Where the query is, for messages: the panel and its refId, or the variable. */
  where: string;
  expr: string;
}

/** The PromQL of every panel target and of every query variable's selector. */
export function dashboardQueries(dashboard: Dashboard): Query[] {
  const queries: Query[] = [];
  for (const panel of allPanels(dashboard))
    for (const target of panel.targets ?? [])
      queries.push({ where: `panel ${panel.id} "${panel.title}" ${target.refId}`, expr: target.expr ?? '' });
  for (const variable of dashboard.templating.list) {
    if (variable.type !== 'query') continue;
    const text = typeof variable.query === 'string' ? variable.query : (variable.query?.query ?? '');
    // A query of another form selects no metric the checks could hold to the pipeline's.
    queries.push({ where: `variable ${variable.name}`, expr: LABEL_VALUES.exec(text)?.[1] ?? text });
  }
  return queries;
}

const overlap = (a: Panel['gridPos'], b: Panel['gridPos']): boolean =>
  a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

/** What is wrong with the dashboard's form; empty when nothing is. */
export function dashboardProblems(dashboard: Dashboard): string[] {
  const problems: string[] = [];
  if (!(dashboard.schemaVersion >= MIN_SCHEMA_VERSION))
    problems.push(`schemaVersion ${dashboard.schemaVersion} is older than ${MIN_SCHEMA_VERSION}`);
  const dataSourceVariable = dashboard.templating.list.find(
    (variable) => variable.type === 'datasource' && variable.query === 'prometheus',
  );
  if (!dataSourceVariable) problems.push('no Prometheus data source variable');
  const expected = { type: 'prometheus', uid: `\${${dataSourceVariable?.name ?? 'datasource'}}` };
  const sameSource = (ref: DataSourceRef | undefined) =>
    ref?.type === expected.type && ref.uid === expected.uid;

  // Panels of a collapsed row are placed when it opens; only the visible ones must not overlap.
  const visible = dashboard.panels;
  visible.forEach((panel, index) => {
    const hit = visible.slice(0, index).find((other) => overlap(other.gridPos, panel.gridPos));
    if (hit) problems.push(`panel ${panel.id} "${panel.title}": overlaps panel ${hit.id}`);
  });
  const ids = new Set<number>();
  for (const panel of allPanels(dashboard)) {
    const name = `panel ${panel.id} "${panel.title}"`;
    if (ids.has(panel.id)) problems.push(`${name}: its id is not unique`);
    ids.add(panel.id);
    const { x, w } = panel.gridPos;
    if (x < 0 || w < 1 || x + w > GRID_COLUMNS) problems.push(`${name}: outside the ${GRID_COLUMNS} columns`);
    if (panel.type === 'row') continue;
    if (!sameSource(panel.datasource)) problems.push(`${name}: not on the data source variable`);
    if (!panel.targets?.length) problems.push(`${name}: no query`);
    for (const target of panel.targets ?? []) {
      if (!sameSource(target.datasource))
        problems.push(`${name} ${target.refId}: not on the data source variable`);
      if (!target.expr) problems.push(`${name} ${target.refId}: no expression`);
    }
  }
  for (const variable of dashboard.templating.list)
    if (variable.type === 'query' && !sameSource(variable.datasource))
      problems.push(`variable ${variable.name}: not on the data source variable`);
  return problems;
}
