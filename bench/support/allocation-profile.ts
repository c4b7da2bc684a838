// Allocation profiles of a benchmark's child (BENCH_ALLOC_PROF): V8's sampling heap profiler,
// started through the inspector so that it keeps the samples of objects the GC collected (node's
// --heap-prof keeps only what is alive when the process exits, which says nothing of the
// garbage that makes the GC work). `all` samples every allocation; `old` only what outlives the
// young generation (promoted, or allocated in old space): what the major GCs have to collect,
// and what the shipped heap flags make them collect often (docs/BENCHMARKS.md).
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';

export type AllocationProfileKind = 'all' | 'old';

/** One sample per 32 KiB allocated on average: a 60,000-record drain gives about 70,000. */
const SAMPLING_INTERVAL_BYTES = 32 * 1024;

export function allocationProfileKind(value: string | undefined): AllocationProfileKind | undefined {
  if (value === undefined || value === '') return undefined;
  if (value === 'all' || value === 'old') return value;
  throw new Error(`BENCH_ALLOC_PROF must be all or old, not ${value}`);
}

/** Starts sampling; the returned function stops it and writes `<dir>/<name>.heapprofile`. */
export async function startAllocationProfile(
  kind: AllocationProfileKind,
  dir: string,
  name: string,
): Promise<() => Promise<string>> {
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: SAMPLING_INTERVAL_BYTES,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: kind === 'all',
  });
  return async () => {
    const { profile } = await session.post('HeapProfiler.stopSampling');
    session.disconnect();
    const path = join(dir, `${name}.heapprofile`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(path, JSON.stringify(profile));
    return path;
  };
}
