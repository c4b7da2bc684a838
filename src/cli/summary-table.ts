// The demo's closing table: what came in, what went out and what it cost.
import type { RunSummary } from '../pipeline/run-summary.ts';

const row = (label: string, value: string | number) =>
  `│ ${label.padEnd(44)} │ ${String(value).padStart(12)} │`;
const rule = (left: string, mid: string, right: string) =>
  `${left}${'─'.repeat(46)}${mid}${'─'.repeat(14)}${right}`;

export function summaryTable(summary: RunSummary, where: { input: string; outputDir: string }): string {
  const outcome = (name: string) => summary.outcomes.get(name) ?? 0;
  const seconds = summary.elapsedSeconds();
  const lines = [
    rule('┌', '┬', '┐'),
    row('records read', summary.recordsIn),
    row('match', outcome('MATCH')),
    row('maybe match', outcome('MAYBE_MATCH')),
    row('no match', outcome('NO_MATCH')),
    row('failed lookups', outcome('FAILED')),
    row('deleted (tombstones)', outcome('DELETED')),
    row('reused without lookup (unchanged)', summary.reused),
    row('dead letters', summary.deadLettered),
    ...[...summary.deadLetters]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([reason, n]) => row(`  ${reason}`, n)),
    row('bulks submitted', summary.bulks),
    row('quota used (tasks)', summary.quotaConsumed),
    row('quota pauses', summary.pauses.get('quota') ?? 0),
    row('records/s', Math.round(summary.recordsIn / seconds)),
    row('seconds', seconds.toFixed(1)),
    rule('└', '┴', '┘'),
  ];
  return [`input ${where.input} -> outputs in ${where.outputDir}/`, ...lines].join('\n');
}
