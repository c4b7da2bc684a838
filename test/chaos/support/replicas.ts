// Pipeline replicas (`partner-enrich run`) as separate processes configured through the
// environment, under a supervisor that restarts a replica that exits while it should run, as
// Kubernetes restarts a container. Every start, signal and exit is logged with its time so the
// reconciliation can tell a kill from a rebalance.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, fstatSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, type RunDir } from '../../../deploy/local/processes.ts';
import { CLI, NODE } from './run-dir.ts';

export type ReplicaEvent =
  | { at: number; replica: string; type: 'start'; pid: number; metricsPort: number }
  | { at: number; replica: string; type: 'signal'; signal: NodeJS.Signals }
  | {
      at: number;
      replica: string;
      type: 'exit';
      code: number | null;
      signal: NodeJS.Signals | null;
      /** The signal the harness sent to this life of the process; null when it exited by itself. */
      requested: NodeJS.Signals | null;
      wanted: boolean;
      /** The last fatal or error entry this life logged: why a replica exited by itself. */
      lastError?: string;
    };

interface Replica {
  name: string;
  metricsPort: number;
  child: ChildProcess | undefined;
  requested: NodeJS.Signals | null;
  /** Whether the replica should run: the supervisor restarts it when it exits while wanted. */
  wanted: boolean;
  exited: Promise<void>;
}

/** pino's error (50) and fatal (60) levels. */
const ERROR_LEVEL = 50;

interface LogEntry {
  level?: number;
  msg?: string;
  err?: { code?: string; message?: string };
}

/**
 * The last error or fatal entry logged after `offset` ("code: message"), else the end of what
 * was written (a crash's stack): kept in the report, since CI removes the logs.
 */
function lastError(path: string, offset: number): string {
  const written = readFileSync(path).subarray(offset).toString('utf8');
  const errors = written.split('\n').flatMap((line) => {
    try {
      const entry = JSON.parse(line) as LogEntry;
      return (entry.level ?? 0) >= ERROR_LEVEL ? [entry] : [];
    } catch {
      return []; // not pino's JSON
    }
  });
  const last = errors.at(-1);
  const said = last ? (last.err ? `${last.err.code ?? 'error'}: ${last.err.message}` : last.msg) : undefined;
  return (said ?? written.trimEnd()).slice(-500);
}

const alive = (replica: Replica): boolean =>
  replica.child !== undefined && replica.child.exitCode === null && replica.child.signalCode === null;

export interface ReplicaSetOptions {
  runDir: RunDir;
  /** The pipeline's configuration, as PARTNER_ENRICH_* variables. */
  env: Record<string, string>;
  /** Pause before the supervisor restarts a replica that exited. */
  restartDelayMs?: number;
}

export class ReplicaSet {
  readonly events: ReplicaEvent[] = [];
  readonly #options: ReplicaSetOptions;
  readonly #replicas: Replica[] = [];
  #count = 0;

  constructor(options: ReplicaSetOptions) {
    this.#options = options;
  }

  /** Replicas that should run, in the order they were added. */
  get running(): readonly { name: string; metricsPort: number; pid: number | undefined }[] {
    return this.#replicas
      .filter((r) => r.wanted)
      .map((r) => ({ name: r.name, metricsPort: r.metricsPort, pid: r.child?.pid }));
  }

  /** Every metrics port a replica ever listened on, for a poller that follows the set. */
  get metricsPorts(): number[] {
    return this.#replicas.filter((r) => r.wanted && r.child).map((r) => r.metricsPort);
  }

  /** Supervisor restarts after an exit the harness did not ask for. */
  get restarts(): number {
    return this.events.filter((e) => e.type === 'start').length - this.#replicas.length;
  }

  /** Exits nobody asked for: the pipeline gave up by itself (or crashed). */
  selfExits(): Extract<ReplicaEvent, { type: 'exit' }>[] {
    return this.events.flatMap((e) => (e.type === 'exit' && e.requested === null ? [e] : []));
  }

  /** Exits after a signal from the harness, SIGKILL included. */
  requestedExits(): Extract<ReplicaEvent, { type: 'exit' }>[] {
    return this.events.flatMap((e) => (e.type === 'exit' && e.requested !== null ? [e] : []));
  }

  /** The last `lines` lines each replica wrote (its starts appended to one file), for a scenario that got stuck. */
  logTails(lines: number): string {
    return this.#replicas
      .map((replica) => {
        const log = readFileSync(join(this.#options.runDir.path, `${replica.name}.log`), 'utf8').trimEnd();
        return `--- ${replica.name}, last ${lines} lines ---\n${log.split('\n').slice(-lines).join('\n')}`;
      })
      .join('\n');
  }

  /** Starts `count` more replicas at the same moment. */
  async add(count: number): Promise<string[]> {
    const replicas: Replica[] = [];
    for (let i = 0; i < count; i += 1) {
      this.#count += 1;
      const replica: Replica = {
        name: `replica-${this.#count}`,
        metricsPort: await freePort(),
        child: undefined,
        requested: null,
        wanted: true,
        exited: Promise.resolve(),
      };
      this.#replicas.push(replica);
      replicas.push(replica);
    }
    for (const replica of replicas) this.#spawn(replica);
    return replicas.map((r) => r.name);
  }

  /** Resolves true once every named replica answers /readyz with 200, false at the deadline. */
  async waitReady(names: string[], timeoutMs = 60_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    const ready = async (name: string) => {
      const response = await fetch(`http://127.0.0.1:${this.#find(name).metricsPort}/readyz`).catch(
        () => undefined,
      );
      return response?.status === 200;
    };
    while (Date.now() < deadline) {
      if ((await Promise.all(names.map(ready))).every(Boolean)) return true;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    return false;
  }

  /** Sends a signal to a running replica; it stays wanted, so the supervisor restarts it once it exits. */
  signal(name: string, signal: NodeJS.Signals): void {
    const replica = this.#find(name);
    if (!alive(replica)) return;
    this.#send(replica, signal);
  }

  /** Scale down: the replica is no longer wanted, gets the signal, and is not restarted. */
  async remove(name: string, signal: 'SIGTERM' | 'SIGKILL'): Promise<void> {
    const replica = this.#find(name);
    replica.wanted = false;
    if (alive(replica)) this.#send(replica, signal);
    await replica.exited;
  }

  /** Scales to `count` replicas: adds new ones (returning their names), or removes the newest with the signal. */
  async scaleTo(count: number, signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<string[]> {
    const wanted = this.#replicas.filter((r) => r.wanted);
    if (count > wanted.length) return this.add(count - wanted.length);
    for (const replica of wanted.slice(count).reverse()) await this.remove(replica.name, signal);
    return [];
  }

  /** Stops every replica with SIGTERM (then SIGKILL after `graceMs`). */
  async stopAll(graceMs = 20_000): Promise<void> {
    await Promise.all(
      this.#replicas.map(async (replica) => {
        replica.wanted = false;
        if (!alive(replica)) return replica.exited;
        const timer = setTimeout(() => replica.child?.kill('SIGKILL'), graceMs);
        this.#send(replica, 'SIGTERM');
        await replica.exited;
        clearTimeout(timer);
      }),
    );
  }

  #send(replica: Replica, signal: NodeJS.Signals): void {
    this.events.push({ at: Date.now(), replica: replica.name, type: 'signal', signal });
    replica.requested ??= signal;
    replica.child?.kill(signal);
  }

  #find(name: string): Replica {
    const replica = this.#replicas.find((r) => r.name === name);
    if (!replica) throw new Error(`no replica ${name}`);
    return replica;
  }

  #spawn(replica: Replica): void {
    const logPath = join(this.#options.runDir.path, `${replica.name}.log`);
    const log = openSync(logPath, 'a');
    // Bytes in the log when this life starts: its own lines come after.
    const logOffset = fstatSync(log).size;
    // The replicas' private state directories (and the ledger journals a killed one leaves) in
    // the scenario's folder, as on one machine of their own: gone with it, not left in /tmp.
    const tmp = join(this.#options.runDir.path, 'tmp');
    mkdirSync(tmp, { recursive: true });
    const child = spawn(NODE, [CLI, 'run'], {
      cwd: this.#options.runDir.path,
      env: {
        PATH: process.env.PATH ?? '',
        TMPDIR: tmp,
        ...this.#options.env,
        PARTNER_ENRICH_KAFKA__CLIENT_ID: replica.name,
        PARTNER_ENRICH_OBSERVABILITY__METRICS_PORT: String(replica.metricsPort),
      },
      stdio: ['ignore', log, log],
    });
    closeSync(log);
    replica.child = child;
    replica.requested = null;
    this.events.push({
      at: Date.now(),
      replica: replica.name,
      type: 'start',
      pid: child.pid ?? -1,
      metricsPort: replica.metricsPort,
    });
    replica.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.events.push({
          at: Date.now(),
          replica: replica.name,
          type: 'exit',
          code,
          signal,
          requested: replica.requested,
          wanted: replica.wanted,
          ...(replica.requested === null ? { lastError: lastError(logPath, logOffset) } : {}),
        });
        if (replica.wanted) {
          setTimeout(() => {
            if (replica.wanted) this.#spawn(replica);
            resolve();
          }, this.#options.restartDelayMs ?? 1_000);
        } else resolve();
      });
    });
  }
}
