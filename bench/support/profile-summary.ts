// Summarises a V8 CPU profile (node --cpu-prof): self time per function and per package or
// source folder, the biggest first; or an allocation profile (BENCH_ALLOC_PROF, a .heapprofile):
// bytes allocated per function and per package or folder. `node bench/support/profile-summary.ts FILE [top]`.
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

interface AllocationNode {
  id: number;
  callFrame: ProfileNode['callFrame'];
  children: AllocationNode[];
}

interface AllocationProfile {
  head: AllocationNode;
  samples: { size: number; nodeId: number }[];
}

export interface ProfileRow {
  name: string;
  /** Milliseconds of self time, or bytes allocated in an allocation profile. */
  amount: number;
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

interface Summary {
  functions: ProfileRow[];
  areas: ProfileRow[];
  /** All the profile holds: milliseconds profiled, or bytes allocated. */
  total: number;
}

/** Adds up what each call frame spent itself, per function and per area, the biggest first. */
function summarise(self: Iterable<[ProfileNode['callFrame'], number]>, total: number, top: number): Summary {
  const functions = new Map<string, number>();
  const areas = new Map<string, number>();
  for (const [callFrame, amount] of self) {
    const file = callFrame.url.split('/').at(-1) ?? '';
    const name =
      `${callFrame.functionName || '(anonymous)'} ${file ? `${file}:${callFrame.lineNumber + 1}` : ''}`.trim();
    functions.set(name, (functions.get(name) ?? 0) + amount);
    const area = callFrame.url ? areaOf(callFrame.url) : callFrame.functionName || '(native)';
    areas.set(area, (areas.get(area) ?? 0) + amount);
  }
  const rows = (map: Map<string, number>) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, amount]) => ({ name, amount: Math.round(amount), share: amount / total }));
  return { functions: rows(functions), areas: rows(areas), total };
}

export function summariseProfile(path: string, top = 15): Summary {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfMs = new Map<number, number>();
  profile.samples.forEach((id, i) =>
    selfMs.set(id, (selfMs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000),
  );
  const total = (profile.endTime - profile.startTime) / 1000;
  const self = [...selfMs].map(([id, ms]): [ProfileNode['callFrame'], number] => [
    (byId.get(id) as ProfileNode).callFrame,
    ms,
  ]);
  return summarise(self, total, top);
}

export function summariseAllocations(path: string, top = 15): Summary {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as AllocationProfile;
  const byId = new Map<number, AllocationNode>();
  const index = (node: AllocationNode) => {
    byId.set(node.id, node);
    for (const child of node.children) index(child);
  };
  index(profile.head);
  // V8 leaves out of the tree some call sites whose every sample was collected; their bytes
  // still count, under one name.
  const unknown = { functionName: '(call site not in the profile)', url: '', lineNumber: -1 };
  const self = profile.samples.map(({ nodeId, size }): [ProfileNode['callFrame'], number] => [
    byId.get(nodeId)?.callFrame ?? unknown,
    size,
  ]);
  return summarise(
    self,
    self.reduce((sum, [, size]) => sum + size, 0),
    top,
  );
}

if (import.meta.main) {
  const [path, top] = process.argv.slice(2);
  if (!path) throw new Error('usage: profile-summary.ts FILE [top]');
  const allocations = path.endsWith('.heapprofile');
  const { functions, areas, total } = (allocations ? summariseAllocations : summariseProfile)(
    path,
    Number(top ?? 15),
  );
  const amount = (value: number) =>
    allocations ? `${(value / 1e6).toFixed(1).padStart(8)} MB` : `${String(value).padStart(7)} ms`;
  const line = (row: ProfileRow) =>
    `${(row.share * 100).toFixed(1).padStart(5)}%  ${amount(row.amount)}  ${row.name}`;
  const what = allocations ? 'bytes allocated' : 'self time';
  if (allocations) console.log(`${(total / 1e6).toFixed(1)} MB allocated (sampled)`);
  console.log(`${what} by area:`);
  for (const row of areas) console.log(line(row));
  console.log(`\n${what} by function:`);
  for (const row of functions) console.log(line(row));
}
