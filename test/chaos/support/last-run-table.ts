// The reconciliation table of docs/GUARANTEES.md ("Last run"), one row per scenario, from the
// reports a chaos run leaves in test-results/chaos/: `node test/chaos/support/last-run-table.ts
// [dir]` prints it, ready to paste after a CI run.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ScenarioReport } from './scenario.ts';

const HEADER = [
  'scenario',
  'time',
  'records',
  'lost',
  'commits at end',
  'duplicate outputs (cause)',
  'tasks / lookups needed',
  'quota units',
  'tasks beyond needed (cause)',
  'kill windows: bulks (tasks again) / consumes (units)',
  'peak in flight / cap',
  'supervisor restarts',
];

const count = (n: number) => n.toLocaleString('en-US');

/** `name n, ...` of the causes that count. */
const causes = (byCause: Record<string, number>, names: Record<string, string> = {}): string =>
  Object.entries(byCause)
    .filter(([, n]) => n > 0)
    .map(([cause, n]) => `${names[cause] ?? cause} ${count(n)}`)
    .join(', ');

export function lastRunRow(r: ScenarioReport): string[] {
  const { payment: p, lookups, duplicates } = r;
  const { total, ...beyond } = lookups.beyondNeeded;
  const duplicated =
    duplicates.extraOutputs === 0
      ? '0'
      : `${count(duplicates.extraOutputs)} (${count(duplicates.positions)} records: ${causes(duplicates.byCause)})`;
  return [
    `\`${r.scenario}\``,
    `${Math.round(r.seconds)} s`,
    count(r.input.records),
    count(r.lost),
    r.commits.atEnd ? 'yes' : 'no',
    duplicated,
    `${count(lookups.tasks)} / ${count(lookups.needed)}`,
    count(p.quotaConsumed),
    total === 0 ? '0' : `${count(total)} (${causes(beyond, { serviceRestart: 'service restart' })})`,
    `${p.killWindows.bulks} (${count(p.killWindows.tasksAgain)}) / ${p.killWindows.consumes} (${count(p.killWindows.units)})`,
    `${count(r.inFlightPeak)} / ${count(r.maxInFlightRecords)}`,
    String(r.processes.supervisorRestarts),
  ];
}

/** The markdown table of the reports, by scenario name. */
export function lastRunTable(reports: ScenarioReport[]): string {
  const rows = [...reports].sort((a, b) => a.scenario.localeCompare(b.scenario)).map(lastRunRow);
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(HEADER), line(HEADER.map(() => '---')), ...rows.map(line)].join('\n');
}

if (import.meta.main) {
  const dir = process.argv[2] ?? join('test-results', 'chaos');
  const reports = readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .map((name) => JSON.parse(readFileSync(join(dir, name), 'utf8')) as ScenarioReport);
  console.log(lastRunTable(reports));
}
