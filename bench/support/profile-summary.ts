// Summarises a V8 CPU profile (node --cpu-prof): self time per function and per package or
// source folder, the biggest first. `node bench/support/profile-summary.ts FILE [top]`.
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileRow {
  name: string;
  ms: number;
  share: number;
}

/** Where a script lives: its npm package, or its folder in this project. */
function areaOf(url: string): string {
  if (!url) return '(native/idle/gc)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg?.[1]) return pkg[1];
  if (url.startsWith('node:')) return url.split('/')[0] ?? url;
  const own = /\/(src|bench|deploy)\/(.*)\/[^/]+$/.exec(url);
  return own ? `${own[1]}/${own[2]}` : url;
}

export function summariseProfile(path: string, top = 15): { functions: ProfileRow[]; areas: ProfileRow[] } {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfMs = new Map<number, number>();
  profile.samples.forEach((id, i) =>
    selfMs.set(id, (selfMs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000),
  );
  const total = (profile.endTime - profile.startTime) / 1000;
  const functions = new Map<string, number>();
  const areas = new Map<string, number>();
  for (const [id, ms] of selfMs) {
    const { callFrame } = byId.get(id) as ProfileNode;
    const file = callFrame.url.split('/').at(-1) ?? '';
    const name =
      `${callFrame.functionName || '(anonymous)'} ${file ? `${file}:${callFrame.lineNumber + 1}` : ''}`.trim();
    functions.set(name, (functions.get(name) ?? 0) + ms);
    const area = callFrame.url ? areaOf(callFrame.url) : callFrame.functionName || '(native)';
    areas.set(area, (areas.get(area) ?? 0) + ms);
  }
  const rows = (map: Map<string, number>) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, ms]) => ({ name, ms: Math.round(ms), share: ms / total }));
  return { functions: rows(functions), areas: rows(areas) };
}

if (import.meta.main) {
  const [path, top] = process.argv.slice(2);
  if (!path) throw new Error('usage: profile-summary.ts FILE [top]');
  const { functions, areas } = summariseProfile(path, Number(top ?? 15));
  const line = (row: ProfileRow) =>
    `${(row.share * 100).toFixed(1).padStart(5)}%  ${String(row.ms).padStart(7)} ms  ${row.name}`;
  console.log('self time by area:');
  for (const row of areas) console.log(line(row));
  console.log('\nself time by function:');
  for (const row of functions) console.log(line(row));
}
