// A rerun's other yield to live work, beside the quota: this process's CPU. Under a quota
// the service grants generously, a rerun's lookups, outputs and state writes compete with
// live records for the one event loop; a rerun takes its next chunk only while the loop was
// not busier than `maxUtilization` since the last chunk (event loop utilization: the part
// of the time spent running rather than waiting for I/O).
import { performance } from 'node:perf_hooks';

export interface HeadroomOptions {
  maxUtilization: number;
  /** How long to wait before looking again when the loop is too busy. */
  recheckMs: number;
  sleep?: (ms: number) => Promise<void>;
  utilization?: () => number;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/** Event loop utilization since the previous call. */
function utilizationSinceLastCall(): () => number {
  let last = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const recent = performance.eventLoopUtilization(now, last);
    last = now;
    return recent.utilization;
  };
}

/** Resolves once the event loop has room for a rerun's next chunk. */
export function liveHeadroom(options: HeadroomOptions): () => Promise<void> {
  const utilization = options.utilization ?? utilizationSinceLastCall();
  const sleep = options.sleep ?? defaultSleep;
  return async () => {
    while (utilization() > options.maxUtilization) await sleep(options.recheckMs);
  };
}
