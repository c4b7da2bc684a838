// How a rerun is printed: one job as a two-column table with its change report, several as
// a list table, and a one-line progress report for logs.
import type { RerunView } from '../rerun/rerun-view.ts';

const iso = (ms: number | undefined): string | undefined =>
  ms === undefined ? undefined : new Date(ms).toISOString();

/** 3725000 -> "1h 2m 5s"; a time left is never shown finer than a second. */
export function duration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  const parts = [
    [Math.floor(seconds / 3600), 'h'],
    [Math.floor((seconds % 3600) / 60), 'm'],
    [seconds % 60, 's'],
  ] as const;
  const shown = parts.filter(([n], i) => n > 0 || i === parts.length - 1);
  return shown.map(([n, unit]) => `${n}${unit}`).join(' ');
}

export const rate = (view: RerunView): string =>
  view.rate === undefined ? '-' : `${view.rate.toFixed(view.rate < 10 ? 1 : 0)} partners/s`;

const statusOf = (view: RerunView): string => (view.paused ? `${view.status} (paused)` : view.status);

function twoColumns(rows: [string, string | number | undefined][]): string {
  const shown = rows.filter((row): row is [string, string | number] => row[1] !== undefined);
  const width = Math.max(...shown.map(([name]) => name.length));
  return shown.map(([name, value]) => `${name.padEnd(width)}  ${value}`).join('\n');
}

/** The counts per kind of change, and of what the rerun did with each partner. */
export function changeReport(view: RerunView): string {
  const { counts, changes } = view;
  return twoColumns([
    ['partners read', counts.read],
    ['looked up', counts.lookedUp],
    ['unchanged', counts.unchanged],
    ['changed', counts.changed],
    ['  gained a match', changes.gainedMatch],
    ['  lost the match', changes.lostMatch],
    ['  other svcId', changes.svcIdChanged],
    ['  outcome changed', changes.outcomeChanged],
    ['failed', counts.failed],
    ['superseded by live', counts.superseded],
  ]);
}

export function describeRerun(view: RerunView): string {
  const { job } = view;
  const filter = job.filter;
  const options = [...(job.initialize ? ['initialize'] : []), ...(job.dryRun ? ['dry run'] : [])];
  return [
    twoColumns([
      ['rerun', job.id],
      ['status', statusOf(view)],
      ['progress', `${view.progress} %`],
      ['message', view.message],
      ['input topic', job.inputTopic],
      [
        'partitions',
        `${view.partitions.started} started, ${view.partitions.done} done of ${view.partitions.count ?? '?'}`,
      ],
      ['partners', view.total === undefined ? undefined : `${view.counts.read} read of ${view.total}`],
      ['rate', view.rate === undefined ? undefined : rate(view)],
      ['time left', view.etaMs === undefined ? undefined : duration(view.etaMs)],
      ['countries', filter.countries?.join(', ')],
      ['source systems', filter.sourceSystems?.join(', ')],
      ['outcomes', filter.outcomes?.join(', ')],
      ['not looked up since', iso(filter.notLookedUpSince)],
      ['start after', job.startAfter],
      ['limit', job.limit],
      ['batch size', job.batchSize],
      ['quota share', job.quotaShare],
      ['tags', job.tags.length === 0 ? undefined : job.tags.join(', ')],
      ['options', options.length === 0 ? undefined : options.join(', ')],
      ['schedule', job.schedule],
      ['start at', iso(job.startAt)],
      ['created', iso(job.createdAt)],
      ['started', iso(view.startedAt)],
      ['finished', iso(view.finishedAt)],
    ]),
    '',
    changeReport(view),
  ].join('\n');
}

/** One line per change, for logs: what a progress bar shows on a terminal. */
export function progressLine(view: RerunView, withEta = true): string {
  const parts = [
    `rerun ${view.job.id}: ${statusOf(view)}`,
    `${view.progress} %`,
    `${view.counts.read} of ${view.total ?? '?'} partners read`,
    ...(view.rate === undefined ? [] : [rate(view)]),
    ...(view.etaMs === undefined || !withEta ? [] : [`ETA ${duration(view.etaMs)}`]),
    ...(view.message === undefined ? [] : [view.message]),
  ];
  return parts.join(', ');
}

const HEADERS = ['rerun', 'input topic', 'status', 'progress', 'read', 'changed', 'created', 'message'];

/** The jobs as a table, in the order they run; each column as wide as its widest cell. */
export function rerunTable(views: RerunView[]): string {
  const rows = views.map((v) => [
    v.job.id,
    v.job.inputTopic,
    statusOf(v),
    `${v.progress} %`,
    String(v.counts.read),
    String(v.counts.changed),
    `${new Date(v.job.createdAt).toISOString().slice(0, 19)}Z`,
    v.message ?? '',
  ]);
  const widths = HEADERS.map((header, i) =>
    Math.max(header.length, ...rows.map((row) => row[i]?.length ?? 0)),
  );
  const rule = (left: string, mid: string, right: string) =>
    `${left}${widths.map((w) => '─'.repeat(w + 2)).join(mid)}${right}`;
  const line = (cells: string[]) =>
    `│${cells.map((cell, i) => ` ${cell.padEnd(widths[i] ?? 0)} `).join('│')}│`;
  return [
    rule('┌', '┬', '┐'),
    line(HEADERS),
    rule('├', '┼', '┤'),
    ...rows.map(line),
    rule('└', '┴', '┘'),
  ].join('\n');
}
