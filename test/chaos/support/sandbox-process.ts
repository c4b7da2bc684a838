// The sandbox as a process of its own (`partner-enrich sandbox`), so a scenario can kill and
// restart it like any remote service and inject faults over its admin API. What it accepted
// (bulk audit, counters) lives in its memory; collect() gathers it before every stop, so the
// totals survive restarts. Each bulk is marked with the life of the sandbox that accepted it:
// a bulk of an earlier life is one the restarted service no longer knows. Between two runs of a
// client, reviseDataset() changes the matches of some organizations (see docs/SANDBOX.md).
import {
  freePort,
  startService,
  stopProcess,
  waitUntil,
  type RunDir,
} from '../../../deploy/local/processes.ts';
import type {
  DatasetRevisionReport,
  DatasetRevisionRequest,
  FaultSettingsInput,
  SandboxStatsSnapshot,
} from '../../../src/sandbox/index.ts';
import type { BulkAuditEntry } from '../../../src/sandbox/state/bulk-audit.ts';
import type { ConsumeAuditEntry } from '../../../src/sandbox/state/quota-ledger.ts';
import { CLI, NODE } from './run-dir.ts';

export interface SandboxOptions {
  orgs: number;
  seed: number;
  mode?: 'realistic' | 'instant';
}

/** A bulk as the audit showed it last, and the life (0 = first start) of the sandbox that accepted it. */
export type AuditedBulk = BulkAuditEntry & { life: number };

/** Sums of the counters over every life of the sandbox. */
export interface SandboxTotals {
  bulks: AuditedBulk[];
  /** Every consume that consumed units, in every life (`n` counts within a life). */
  consumes: (ConsumeAuditEntry & { life: number })[];
  bulkSubmissions: number;
  bulkTasks: number;
  quotaConsumed: number;
  quotaConsumeRequests: number;
  injectedServerErrors: number;
  injectedThrottles: number;
  injectedResets: number;
  restarts: number;
}

export interface SandboxProcess {
  url: string;
  setFaults(faults: FaultSettingsInput): Promise<void>;
  /** Revises the dataset; the report names each organization changed, how, and its svcIds before and after. */
  reviseDataset(request: DatasetRevisionRequest): Promise<DatasetRevisionReport>;
  /** Every revision since the start, the last restart or reset. */
  datasetRevisions(): Promise<DatasetRevisionReport[]>;
  /** Reads the audit and counters of the current life into the totals. */
  collect(): Promise<SandboxTotals>;
  /**
   * Freezes it (requests held unprocessed), reads what it processed into the totals, then
   * SIGKILLs it: the held requests die with it, unanswered, as with a crash.
   */
  kill(signal: 'SIGKILL'): Promise<void>;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** POST /admin/dataset/revise on the sandbox at `url`. */
export async function reviseSandboxDataset(
  url: string,
  request: DatasetRevisionRequest,
): Promise<DatasetRevisionReport> {
  const response = await fetch(`${url}/admin/dataset/revise`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(request),
  });
  if (!response.ok) throw new Error(`sandbox dataset revision: ${response.status} ${await response.text()}`);
  return (await response.json()) as DatasetRevisionReport;
}

/** GET /admin/dataset/revisions on the sandbox at `url`. */
export async function sandboxDatasetRevisions(url: string): Promise<DatasetRevisionReport[]> {
  const response = await fetch(`${url}/admin/dataset/revisions`);
  if (!response.ok) throw new Error(`sandbox dataset revisions: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { revisions: DatasetRevisionReport[] }).revisions;
}

export async function startSandboxProcess(runDir: RunDir, options: SandboxOptions): Promise<SandboxProcess> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const args = [
    CLI,
    'sandbox',
    ...['--port', String(port), '--orgs', String(options.orgs), '--seed', String(options.seed)],
    ...['--mode', options.mode ?? 'realistic'],
  ];
  const launch = async () => {
    const service = await startService(runDir, `sandbox-${port}`, NODE, args);
    await waitUntil('sandbox', async () => (await fetch(`${url}/admin/stats`)).ok, {
      timeoutMs: 60_000,
      ...service,
    });
    return service;
  };
  let service = await launch();
  const totals: SandboxTotals = {
    bulks: [],
    consumes: [],
    bulkSubmissions: 0,
    bulkTasks: 0,
    quotaConsumed: 0,
    quotaConsumeRequests: 0,
    injectedServerErrors: 0,
    injectedThrottles: 0,
    injectedResets: 0,
    restarts: 0,
  };
  // Counters of the current life already added to the totals, so collect() can be called often;
  // its bulks are replaced by each newer view, whose tasks may have run since.
  let counted = {
    bulks: new Map<string, number>(),
    consumes: 0,
    stats: undefined as SandboxStatsSnapshot | undefined,
  };
  const get = async <T>(path: string): Promise<T> => {
    const response = await fetch(`${url}${path}`);
    if (!response.ok) throw new Error(`sandbox ${path}: ${response.status}`);
    return (await response.json()) as T;
  };
  const collect = async (): Promise<SandboxTotals> => {
    if (service.exited()) return totals;
    const [audit, quotaAudit, stats] = await Promise.all([
      get<{ bulks: BulkAuditEntry[] }>('/admin/bulk-audit'),
      get<{ consumes: ConsumeAuditEntry[] }>('/admin/quota-audit'),
      get<SandboxStatsSnapshot>('/admin/stats'),
    ]);
    for (const consume of quotaAudit.consumes) {
      if (consume.n <= counted.consumes) continue;
      totals.consumes.push({ ...consume, life: totals.restarts });
      counted.consumes = consume.n;
    }
    for (const bulk of audit.bulks) {
      const entry = { ...bulk, life: totals.restarts };
      const index = counted.bulks.get(bulk.id);
      if (index !== undefined) totals.bulks[index] = entry;
      else counted.bulks.set(bulk.id, totals.bulks.push(entry) - 1);
    }
    const before = counted.stats;
    const delta = (key: keyof SandboxStatsSnapshot & keyof SandboxTotals) =>
      (stats[key] as number) - ((before?.[key] as number | undefined) ?? 0);
    totals.bulkSubmissions += delta('bulkSubmissions');
    totals.bulkTasks += delta('bulkTasks');
    totals.quotaConsumed += delta('quotaConsumed');
    totals.quotaConsumeRequests += delta('quotaConsumeRequests');
    totals.injectedServerErrors += delta('injectedServerErrors');
    totals.injectedThrottles += delta('injectedThrottles');
    totals.injectedResets += delta('injectedResets');
    counted.stats = stats;
    return totals;
  };
  const setFaults = async (faults: FaultSettingsInput): Promise<void> => {
    const response = await fetch(`${url}/admin/faults`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(faults),
    });
    if (!response.ok) throw new Error(`sandbox faults: ${response.status} ${await response.text()}`);
  };
  return {
    url,
    setFaults,
    reviseDataset: (request) => reviseSandboxDataset(url, request),
    datasetRevisions: () => sandboxDatasetRevisions(url),
    collect,
    async kill(signal) {
      // Read unfrozen, a bulk created between the read and the kill was never counted, its
      // consume before the read was: 100 quota units without a bulk (service-restart, once).
      await setFaults({ frozen: true });
      await collect();
      process.kill(-service.pid, signal);
      while (!service.exited()) await new Promise((resolve) => setTimeout(resolve, 50));
    },
    async restart() {
      if (!service.exited()) throw new Error('sandbox is still running');
      service = await launch();
      counted = { bulks: new Map(), consumes: 0, stats: undefined };
      totals.restarts += 1;
    },
    async stop() {
      await collect().catch(() => totals);
      await stopProcess(service.pid, 5_000);
    },
  };
}
