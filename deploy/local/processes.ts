// Starting and stopping the local JVM services so that a second run never trips over
// the first: every run has its own folder under .cache/run holding its data and the
// pids it started; a later start kills what a crashed run left behind.
import { spawn } from 'node:child_process';
import { openSync, closeSync, existsSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export interface RunDir {
  path: string;
  pids: number[];
}

/**
 * A port for a service of ours to listen on, below the kernel's ephemeral range. A port the
 * kernel hands out for listen(0) comes from the same range as the local ports of outgoing
 * connections: in the time between choosing it and the JVM binding it, a client connecting
 * anywhere could take it as its own local port (seen in CI: the restartable broker's
 * controller "failed to bind to 127.0.0.1:41059: Address already in use"). Below the range,
 * only another listener could, and each candidate is bound once to check.
 */
export async function freePort(): Promise<number> {
  const below = ephemeralRangeStart();
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const candidate = FIRST_CHOSEN_PORT + Math.floor(Math.random() * (below - FIRST_CHOSEN_PORT));
    if (!handedOut.has(candidate) && (await bindable(candidate))) return handOut(candidate);
  }
  return handOut(await listenedPort(0));
}

/**
 * Ports this process chose: a port is bound by its user only later, so two choices in a row
 * could draw the same one (seen in CI: a broker's listener and controller on one port,
 * "If you have two listeners on the same port then one needs to be IPv4 and the other IPv6").
 */
const handedOut = new Set<number>();

function handOut(port: number): number {
  handedOut.add(port);
  return port;
}

/** Ports below this are left to the system's own services. */
const FIRST_CHOSEN_PORT = 20_000;

function ephemeralRangeStart(): number {
  try {
    const start = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0]);
    return Number.isInteger(start) && start > FIRST_CHOSEN_PORT + 1_000 ? start : 32_768;
  } catch {
    return 32_768;
  }
}

const bindable = (port: number): Promise<boolean> =>
  listenedPort(port).then(
    () => true,
    () => false,
  );

function listenedPort(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('no port assigned'));
      });
    });
  });
}

export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Stops a process group: SIGTERM, then SIGKILL after the grace period. */
export async function stopProcess(pid: number, graceMs = 15_000): Promise<void> {
  const signal = (sig: NodeJS.Signals) => {
    try {
      process.kill(-pid, sig);
    } catch {
      // the group is gone already
    }
  };
  signal('SIGTERM');
  const deadline = Date.now() + graceMs;
  while (isAlive(pid) && Date.now() < deadline) await sleep(100);
  if (isAlive(pid)) signal('SIGKILL');
}

const PIDS_FILE = 'pids.json';
/** Marks a run folder whose files were asked for (the chaos suite's CHAOS_KEEP_LOGS=true). */
const KEPT_FILE = 'KEPT';

/** The process runs in `folder` (each service is started there), as Linux's /proc tells. */
function worksIn(pid: number, folder: string): boolean {
  try {
    return readlinkSync(`/proc/${pid}/cwd`) === realpathSync(folder);
  } catch {
    return false;
  }
}

/** Stops the services recorded in a run folder and in the folders inside it (a chaos run holds one per scenario). */
async function stopRecordedServices(path: string): Promise<void> {
  const inside = (await readdir(path, { withFileTypes: true }))
    .filter((entry) => entry.isDirectory())
    .map((entry) => join(path, entry.name));
  for (const folder of [path, ...inside]) {
    const pidsFile = join(folder, PIDS_FILE);
    try {
      const pids = JSON.parse(await readFile(pidsFile, 'utf8')) as number[];
      // A pid recorded here may belong to another process by now (a reboot, the pids wrapped
      // round): only one still working in this folder is ours, and its group is stopped.
      await Promise.all(pids.filter((pid) => worksIn(pid, folder)).map((pid) => stopProcess(pid, 5_000)));
    } catch {
      // no pid file: nothing was started
    }
    // A kept folder stays: its pids, stopped once, must never be signalled again (they get reused).
    await rm(pidsFile, { force: true });
  }
}

/**
 * Removes run folders whose owner process died without cleaning up, killing their services.
 * A kept folder (keepRunDir) only has its services stopped: the folder is left in place.
 */
export async function reapStaleRuns(runsRoot: string): Promise<void> {
  if (!existsSync(runsRoot)) return;
  for (const entry of await readdir(runsRoot, { withFileTypes: true })) {
    const owner = Number(entry.name.split('-')[0]);
    if (Number.isInteger(owner) && isAlive(owner)) continue;
    const path = join(runsRoot, entry.name);
    if (entry.isDirectory()) await stopRecordedServices(path);
    if (!existsSync(join(path, KEPT_FILE))) await rm(path, { recursive: true, force: true });
  }
}

export async function createRunDir(runsRoot: string): Promise<RunDir> {
  const path = join(runsRoot, `${process.pid}-${Date.now()}`);
  await mkdir(path, { recursive: true });
  return { path, pids: [] };
}

/** Keeps the folder from later runs' reapers, which stop what it left running but remove nothing. */
export async function keepRunDir(run: RunDir): Promise<void> {
  await writeFile(join(run.path, KEPT_FILE), '');
}

/** Every service this process started and has not seen exit: stopStartedServices() stops them. */
const startedHere = new Set<number>();

/**
 * Stops every service this process started, for a signal that comes while services are still
 * starting: each is a detached process group, out of reach of the terminal's Ctrl-C, and they
 * ran on (JVMs of a gigabyte or more) until a later start reaped them.
 */
export async function stopStartedServices(): Promise<void> {
  await Promise.all([...startedHere].map((pid) => stopProcess(pid)));
}

/** Starts a detached process group whose output goes to a log file in the run folder. */
export async function startService(
  run: RunDir,
  name: string,
  command: string,
  args: string[],
): Promise<{ pid: number; logFile: string; exited: () => boolean }> {
  const logFile = join(run.path, `${name}.log`);
  const fd = openSync(logFile, 'a');
  const child = spawn(command, args, { cwd: run.path, detached: true, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  let exited = false;
  child.unref();
  if (child.pid === undefined) throw new Error(`${name}: could not start ${command}`);
  const { pid } = child;
  startedHere.add(pid);
  child.once('exit', () => {
    exited = true;
    startedHere.delete(pid);
  });
  run.pids.push(child.pid);
  await writeFile(join(run.path, PIDS_FILE), JSON.stringify(run.pids));
  return { pid: child.pid, logFile, exited: () => exited };
}

/** Polls `probe` until it resolves true; fails early when the service's process exits. */
export async function waitUntil(
  what: string,
  probe: () => Promise<boolean>,
  options: { timeoutMs: number; exited: () => boolean; logFile: string },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  while (Date.now() < deadline) {
    if (options.exited()) {
      const log = await readFile(options.logFile, 'utf8').catch(() => '');
      throw new Error(
        `${what} exited during start-up; last log lines:\n${log.split('\n').slice(-30).join('\n')}`,
      );
    }
    if (await probe().catch(() => false)) return;
    await sleep(250);
  }
  throw new Error(`${what} not ready after ${options.timeoutMs} ms (log: ${options.logFile})`);
}
