// 3. Quota efficiency. (a) With a quota of Q tasks per window W and a backlog larger than the
// quota lets through, the share of Q used in each full window, the OVER_LIMIT answers per
// window, and records lost. (b) With repeats and unchanged re-sends in the input, the quota
// units spent per distinct changed record (coalescing and skip-unchanged at work).
import { contentHash, toJsonRecord } from '../../src/mapping/lookup-task.ts';
import { setOrganizationQuota, type RunningSandbox } from '../../src/sandbox/index.ts';
import type { PartnerRecord } from '../../src/serde/partner-record.ts';
import type { BenchContext } from '../support/context.ts';
import { drainWithPipeline, produceDistinct } from '../support/drain.ts';
import { countMessages } from '../support/outputs.ts';
import { partnerEncoder, produceBacklog, upstream } from '../support/partners.ts';
import { spread, type Spread } from '../support/stats.ts';
import { createTopics, deleteTopics, uniqueName } from '../support/topics.ts';

export const QUOTA = 2_000;
export const WINDOW_MS = 2_000;
/** The quota gate's retry backoff, sized to the short benchmark window. */
export const QUOTA_BACKOFF = { initialBackoffMs: 100, maxBackoffMs: 500 };

export interface Consume {
  at: number;
  amount: number;
  ok: boolean;
}

/** Records every consume the sandbox answers (it serves from this process). */
export function recordConsumes(sandbox: RunningSandbox): { consumes: Consume[]; stop(): void } {
  const quotas = sandbox.state.quotas;
  const consume = quotas.consume.bind(quotas);
  const consumes: Consume[] = [];
  quotas.consume = (target, amount) => {
    const outcome = consume(target, amount);
    consumes.push({ at: Date.now(), amount, ok: outcome === 'OK' });
    return outcome;
  };
  return { consumes, stop: () => void (quotas.consume = consume) };
}

export interface WindowUse {
  used: number;
  overLimit: number;
}

/** Use per window, without the first and the last (the run starts and the backlog ends in them). */
export function fullWindows(consumes: Consume[], windowMs: number): WindowUse[] {
  const windows = new Map<number, WindowUse>();
  for (const c of consumes) {
    const k = Math.floor(c.at / windowMs);
    const w = windows.get(k) ?? { used: 0, overLimit: 0 };
    if (c.ok) w.used += c.amount;
    else w.overLimit += 1;
    windows.set(k, w);
  }
  const keys = [...windows.keys()].sort((a, b) => a - b);
  const first = keys[0] ?? 0;
  const last = keys.at(-1) ?? 0;
  const full: WindowUse[] = [];
  for (let k = first + 1; k < last; k += 1) full.push(windows.get(k) ?? { used: 0, overLimit: 0 });
  return full;
}

export interface QuotaResult {
  quota: number;
  windowMs: number;
  records: number;
  /** Share of Q used per full window: median, min, max over all full windows of all runs. */
  windowUse: Spread;
  overLimitPerWindow: Spread;
  lost: Spread;
  deadLetters: Spread;
  windowsPerRun: number[];
  dedup: DedupResult;
}

export async function quotaEfficiency(context: BenchContext): Promise<QuotaResult> {
  const sandbox = await context.instantSandbox();
  const windows = Math.max(3, Math.round(6 * Math.min(1, context.scale * 4)));
  const records = QUOTA * (windows + 2);
  const backlog = await produceDistinct(context, 'quota', records);
  const uses: WindowUse[] = [];
  const windowsPerRun: number[] = [];
  const lost: number[] = [];
  const deadLetters: number[] = [];
  try {
    await setOrganizationQuota(sandbox.url, QUOTA, `PT${WINDOW_MS / 1000}S`);
    for (let run = 1; run <= context.runs; run += 1) {
      const recorder = recordConsumes(sandbox);
      let outputs = { results: 0, deadLetters: 0 };
      await drainWithPipeline(
        context,
        sandbox,
        backlog.topic,
        records,
        { quota: QUOTA_BACKOFF },
        {
          inspect: async (topics) => {
            const matches = await countMessages(context.kafka, topics.matches);
            const letters = await countMessages(context.kafka, topics.deadLetters);
            outputs = { results: matches.keys.size, deadLetters: letters.messages };
          },
        },
      );
      recorder.stop();
      const full = fullWindows(recorder.consumes, WINDOW_MS);
      uses.push(...full);
      windowsPerRun.push(full.length);
      lost.push(records - outputs.results);
      deadLetters.push(outputs.deadLetters);
      const shares = full.map((w) => `${((w.used / QUOTA) * 100).toFixed(0)}%`).join(' ');
      context.log(
        `run ${run}: use per full window ${shares}; over-limit ${full.map((w) => w.overLimit).join(' ')}; lost ${records - outputs.results}`,
      );
    }
  } finally {
    sandbox.state.quotas.clear();
    await deleteTopics(context.kafka, [backlog.topic]);
  }
  const dedup = await quotaPerChange(context, sandbox);
  return {
    quota: QUOTA,
    windowMs: WINDOW_MS,
    records,
    windowUse: spread(uses.map((w) => w.used / QUOTA)),
    overLimitPerWindow: spread(uses.map((w) => w.overLimit)),
    lost: spread(lost),
    deadLetters: spread(deadLetters),
    windowsPerRun,
    dedup,
  };
}

export interface DedupResult {
  records: number;
  partners: number;
  /** Records whose content differs from their partner's previous record: what needs a lookup. */
  changes: number;
  unitsPerChange: Spread;
  unitsPerRecord: Spread;
  reused: Spread;
  coalesced: Spread;
  lost: Spread;
}

/** Upstream records with re-sends and updates, and some re-sent at once in bursts. */
function withRepeats(count: number): PartnerRecord[] {
  const base = upstream(Math.round(count / 1.1), { resent: 0.2, updated: 0.15 });
  const stream: PartnerRecord[] = [];
  base.forEach((partner, i) => {
    stream.push(partner);
    if (i % 10 === 0) stream.push({ ...partner, changedAt: partner.changedAt + 1 });
  });
  return stream.slice(0, count);
}

async function quotaPerChange(context: BenchContext, sandbox: RunningSandbox): Promise<DedupResult> {
  const partners = withRepeats(context.count(20_000));
  // A record is a change when its content differs from its partner's previous record.
  const last = new Map<string, string>();
  let changes = 0;
  for (const partner of partners) {
    const hash = contentHash(toJsonRecord(partner));
    if (last.get(partner.partnerId) !== hash) changes += 1;
    last.set(partner.partnerId, hash);
  }
  const topic = uniqueName('dedup');
  await createTopics(context.kafka, [{ topic }]);
  const encode = await partnerEncoder({ url: context.registryUrl }, topic);
  await produceBacklog(context.kafka, topic, partners.length, (i) => {
    const partner = partners[i] as PartnerRecord;
    return { key: partner.partnerId, value: encode(partner) };
  });
  const units: number[] = [];
  const reused: number[] = [];
  const coalesced: number[] = [];
  const lost: number[] = [];
  try {
    for (let run = 1; run <= context.runs; run += 1) {
      let results = 0;
      const before = sandbox.state.stats.snapshot().quotaConsumed;
      const result = await drainWithPipeline(
        context,
        sandbox,
        topic,
        partners.length,
        {},
        {
          inspect: async (topics) =>
            void (results = (await countMessages(context.kafka, topics.matches)).messages),
        },
      );
      units.push(sandbox.state.stats.snapshot().quotaConsumed - before);
      reused.push(result.details.reused ?? 0);
      coalesced.push(result.details.coalesced ?? 0);
      lost.push(partners.length - results);
      context.log(
        `repeats run ${run}: ${units.at(-1)} units for ${changes} changes in ${partners.length} records (reused ${reused.at(-1)}, coalesced ${coalesced.at(-1)})`,
      );
    }
  } finally {
    await deleteTopics(context.kafka, [topic]);
  }
  return {
    records: partners.length,
    partners: new Set(partners.map((p) => p.partnerId)).size,
    changes,
    unitsPerChange: spread(units.map((u) => u / changes)),
    unitsPerRecord: spread(units.map((u) => u / partners.length)),
    reused: spread(reused),
    coalesced: spread(coalesced),
    lost: spread(lost),
  };
}
