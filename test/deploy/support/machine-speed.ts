// How much slower this machine runs JavaScript now than when the start-up bound of issue 15
// was set: the CPU time of a fixed piece of work (integer arithmetic and a Map, JIT-compiled),
// in a Node process of its own, against that work's CPU time on the reference day. The VM this
// project is measured on has run the same code up to three times slower on some days
// (docs/CONTAINER.md, "Start-up of `run`"), which an absolute CPU bound cannot tell from a
// regression.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const exec = promisify(execFile);

const WORK = `
const start = process.cpuUsage();
const seen = new Map();
let h = 0;
for (let i = 0; i < 40_000_000; i += 1) {
  h = (h * 31 + i) | 0;
  if ((i & 1023) === 0) seen.set(h & 65535, i);
}
const used = process.cpuUsage(start);
console.log((used.user + used.system) / 1e6, seen.size);
`;

/**
 * The work's CPU seconds on the reference day (2026-11-30, `run` started in the container in
 * 0.66-0.68 s of CPU): measured on 2026-12-02 at 0.31 s (the least of 9 runs), a day this VM
 * started the same code in 1.13-1.27 s of CPU (1.8 times as much), so 0.31 / 1.8.
 */
export const REFERENCE_WORK_CPU_S = 0.17;

/** The work's CPU seconds now: the least of three runs, as other load only adds to it. */
export async function workCpuSeconds(): Promise<number> {
  const runs: number[] = [];
  for (let i = 0; i < 3; i += 1) {
    const { stdout } = await exec(process.execPath, ['-e', WORK]);
    runs.push(Number(stdout.split(' ')[0]));
  }
  return Math.min(...runs);
}

/** This machine's slowness against the reference day, never below 1: a faster day keeps the bound. */
export async function slowdown(): Promise<number> {
  return Math.max(1, (await workCpuSeconds()) / REFERENCE_WORK_CPU_S);
}
