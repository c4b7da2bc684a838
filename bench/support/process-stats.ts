// What a worker measures about itself: its peak resident set (the kernel's high-water mark,
// so a short spike between samples is not missed) and the time between two instants.
import { readdirSync, readFileSync } from 'node:fs';

/** Peak RSS of this process in MB: VmHWM from /proc, else the current RSS. */
export function peakRssMb(): number {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    if (match?.[1]) return Number(match[1]) / 1024;
  } catch {
    // not Linux
  }
  return process.memoryUsage.rss() / 1024 / 1024;
}

/** Resolves once `done()` holds, checking every `everyMs`; rejects after `timeoutMs`. */
export async function until(
  done: () => boolean,
  what: () => string,
  timeoutMs: number,
  everyMs = 10,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

function machineTicks(): { busy: number; total: number } {
  try {
    const cpu =
      readFileSync('/proc/stat', 'utf8').split('\n')[0]?.trim().split(/\s+/).slice(1).map(Number) ?? [];
    const total = cpu.reduce((sum, n) => sum + n, 0);
    const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0);
    return { busy: total - idle, total };
  } catch {
    return { busy: 0, total: 0 };
  }
}

export interface CpuUse {
  /** CPU time of this process (user + system) over the interval, in ms. */
  processMs: number;
  /**
   * The part of processMs spent on V8's helper threads: concurrent and parallel garbage
   * collection (marking, sweeping) and the optimizing compilers. A CPU profile
   * (`--cpu-prof`) samples the main thread only and does not show it.
   */
  v8HelpersMs: number;
  /** Share of all cores' time that was busy over the interval, 0..1. */
  machineBusy: number;
}

/** The kernel's clock ticks per second in /proc's CPU times (USER_HZ, 100 on Linux). */
const CLOCK_TICKS_PER_SECOND = 100;

/** CPU ms (user + system) in a `/proc/.../stat` file of a process or thread; undefined when unreadable. */
function statCpuMs(statPath: string): number | undefined {
  try {
    const stat = readFileSync(statPath, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the command.
    return ((Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND) * 1000;
  } catch {
    return undefined;
  }
}

/** CPU ms of this process's threads named V8Worker (node's V8 platform pool). */
function v8HelpersMs(): number {
  let ms = 0;
  try {
    for (const task of readdirSync('/proc/self/task')) {
      if (readFileSync(`/proc/self/task/${task}/comm`, 'utf8').trim() !== 'V8Worker') continue;
      ms += statCpuMs(`/proc/self/task/${task}/stat`) ?? 0;
    }
  } catch {
    // not Linux, or a thread that ended meanwhile
  }
  return ms;
}

/** Starts measuring CPU use; call the returned function at the end of the interval. */
export function cpuMeter(): () => CpuUse {
  const processStart = process.cpuUsage();
  const helpersStart = v8HelpersMs();
  const machineStart = machineTicks();
  return () => {
    const used = process.cpuUsage(processStart);
    const machine = machineTicks();
    const total = machine.total - machineStart.total;
    return {
      processMs: (used.user + used.system) / 1000,
      v8HelpersMs: v8HelpersMs() - helpersStart,
      machineBusy: total > 0 ? (machine.busy - machineStart.busy) / total : 0,
    };
  };
}

export interface MemoryPeaks {
  rssMb: number;
  heapUsedMb: number;
  heapTotalMb: number;
  externalMb: number;
}

export interface MemorySample {
  /** Progress (records finished) when the sample was taken. */
  records: number;
  rssMb: number;
  heapUsedMb: number;
}

/**
 * Samples process.memoryUsage() every `everyMs` until the returned function is called; keeps
 * the peaks, and a sample with the progress every `seriesEveryMs`.
 */
export function memorySampler(
  progress: () => number = () => 0,
  everyMs = 100,
  seriesEveryMs = 2_000,
): () => MemoryPeaks & { series: MemorySample[] } {
  const peaks: MemoryPeaks = { rssMb: 0, heapUsedMb: 0, heapTotalMb: 0, externalMb: 0 };
  const series: MemorySample[] = [];
  let nextSeriesAt = 0;
  const mb = (bytes: number) => bytes / 1024 / 1024;
  const sample = () => {
    const m = process.memoryUsage();
    const now = Date.now();
    if (now >= nextSeriesAt) {
      series.push({ records: progress(), rssMb: mb(m.rss), heapUsedMb: mb(m.heapUsed) });
      nextSeriesAt = now + seriesEveryMs;
    }
    peaks.rssMb = Math.max(peaks.rssMb, mb(m.rss));
    peaks.heapUsedMb = Math.max(peaks.heapUsedMb, mb(m.heapUsed));
    peaks.heapTotalMb = Math.max(peaks.heapTotalMb, mb(m.heapTotal));
    peaks.externalMb = Math.max(peaks.externalMb, mb(m.external));
  };
  const timer = setInterval(sample, everyMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    nextSeriesAt = 0;
    sample();
    return { ...peaks, series };
  };
}

/**
 * The local broker's process: the `kafka.Kafka` JVM in the run folder of this process
 * (deploy/local names it after the owner's pid), or of BENCH_BROKER_OWNER_PID when the
 * broker was started by `npm run infra`.
 */
function brokerPid(): number | undefined {
  const owner = process.env.BENCH_BROKER_OWNER_PID ?? String(process.pid);
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      let cmdline: string;
      try {
        cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      } catch {
        continue;
      }
      if (cmdline.includes('kafka.Kafka') && cmdline.includes(`/run/${owner}-`)) return Number(entry);
    }
  } catch {
    // no /proc
  }
  return undefined;
}

/** CPU ms the local broker uses until the returned function is called; undefined when not found. */
export function brokerCpuMeter(): () => number | undefined {
  const pid = brokerPid();
  const start = pid === undefined ? undefined : statCpuMs(`/proc/${pid}/stat`);
  return () => {
    if (pid === undefined || start === undefined) return undefined;
    const end = statCpuMs(`/proc/${pid}/stat`);
    return end === undefined ? undefined : end - start;
  };
}
