// Tasks and quota against the lookups the input needed, when the input has several versions of
// a partner and re-sends of unchanged content (issue 10), so "one task per valid record" no
// longer holds. Read from the input topic, the MatchResults and the sandbox's audit only:
//
// - each valid input record's content key is computed here (the lookup task the record maps
//   to, hashed as the sandbox hashes what it is sent);
// - a MatchResult from a bulk must come from a bulk that asked for the record's own content or
//   a newer version's (a version coalesced into a newer one shares the newer one's lookup);
//   a reused MatchResult must have its content, or a newer version's, looked up somewhere;
// - needed = the distinct contents MatchResults report as looked up; every other task paid is
//   beyond what was needed: a `retry` when the service answered that task FAILED, a
//   `serviceRestart` when the service restarted after accepting it and the content was looked
//   up again in a later life (at most once: a third payment is `other`), else `other`.
import { toJsonRecord } from '../../../src/mapping/lookup-task.ts';
import { contentKey } from '../../../src/sandbox/state/bulk-audit.ts';
import type { PartnerRecord } from '../../../src/serde/partner-record.ts';
import type { AuditedBulk } from './sandbox-process.ts';
import type { ReadMessage } from './topic-reader.ts';

export interface LookupAccount {
  /** Distinct contents that some MatchResult reports as looked up. */
  needed: number;
  tasks: number;
  /** Tasks paid beyond one per needed content, by cause. */
  beyondNeeded: { total: number; retry: number; serviceRestart: number; other: number };
  /** Quota consumed beyond needed + retry + serviceRestart (negative: some lookups consumed none). */
  quotaBeyondNeeded: number;
  /** Bulks of an earlier life of the sandbox whose contents were looked up again after a restart. */
  forgotten: { bulks: number; tasks: number };
  /** MatchResults from a bulk that asked for neither the record's content nor a newer version's. */
  resultsOfOtherContent: number;
  /** Reused MatchResults whose content (or a newer version's) was never looked up. */
  reusedNeverLookedUp: number;
  /** The first few contents with a payment counted `other`: every payment, and the results of the records carrying it. */
  otherSample: {
    contentKey: string;
    payments: { bulkId: string; createdAt: number; life: number; status?: string }[];
    records: { position: string; results: { bulkId: string | null; reused: boolean }[] }[];
  }[];
  /** Valid input records (decoded and mapped here) and how many distinct contents they carry. */
  validRecords: number;
  distinctContents: number;
}

export interface ResultSeen {
  position: string;
  bulkId: string | null;
  reused: boolean;
}

export async function lookupAccount(input: {
  /** The input value as a PartnerRecord (the registry's decoder); throws for a malformed record. */
  decode: (value: Buffer) => Promise<unknown>;
  inputs: ReadMessage[];
  results: ResultSeen[];
  bulks: AuditedBulk[];
  quotaConsumed: number;
}): Promise<LookupAccount> {
  const contentAt = await contentsOf(input.decode, input.inputs);
  const acceptable = acceptableContents(input.inputs, contentAt);
  const bulkContents = new Map(input.bulks.map((b) => [b.id, new Set(b.tasks.map((t) => t.contentKey))]));
  const everPaid = new Set(input.bulks.flatMap((b) => b.tasks.map((t) => t.contentKey)));
  const bulkTime = new Map(input.bulks.map((b) => [b.id, b.createdAt]));

  // The bulk whose lookup each needed content stands on: the earliest a MatchResult names.
  const neededIn = new Map<string, string>();
  let resultsOfOtherContent = 0;
  let reusedNeverLookedUp = 0;
  for (const result of input.results) {
    const allowed = acceptable.get(result.position);
    if (!allowed) continue;
    if (result.reused) {
      if (![...allowed].some((c) => everPaid.has(c))) reusedNeverLookedUp += 1;
      continue;
    }
    const asked = bulkContents.get(result.bulkId ?? '') ?? new Set<string>();
    const own = contentAt.get(result.position) as string;
    const content = asked.has(own) ? own : [...allowed].find((c) => asked.has(c));
    if (content === undefined) {
      resultsOfOtherContent += 1;
      continue;
    }
    const earlier = neededIn.get(content);
    const time = (id: string) => bulkTime.get(id) ?? Infinity;
    if (earlier === undefined || time(result.bulkId as string) < time(earlier))
      neededIn.set(content, result.bulkId as string);
  }

  const needed = neededIn.size;
  const lastLife = new Map<string, number>();
  for (const bulk of input.bulks)
    for (const task of bulk.tasks)
      lastLife.set(task.contentKey, Math.max(lastLife.get(task.contentKey) ?? 0, bulk.life));
  const beyond = { total: 0, retry: 0, serviceRestart: 0, other: 0 };
  const forgotten = { bulks: new Set<string>(), tasks: 0 };
  const repaidAfterRestart = new Set<string>();
  const others = new Set<string>();
  let tasks = 0;
  for (const bulk of [...input.bulks].sort((a, b) => a.createdAt - b.createdAt)) {
    for (const task of bulk.tasks) {
      tasks += 1;
      if (neededIn.get(task.contentKey) === bulk.id) {
        neededIn.set(task.contentKey, '');
        continue;
      }
      beyond.total += 1;
      if (task.status === 'FAILED') beyond.retry += 1;
      else if (
        bulk.life < (lastLife.get(task.contentKey) ?? 0) &&
        !repaidAfterRestart.has(`${bulk.life}:${task.contentKey}`)
      ) {
        repaidAfterRestart.add(`${bulk.life}:${task.contentKey}`);
        beyond.serviceRestart += 1;
        forgotten.bulks.add(bulk.id);
        forgotten.tasks += 1;
      } else {
        beyond.other += 1;
        others.add(task.contentKey);
      }
    }
  }
  return {
    needed,
    tasks,
    beyondNeeded: beyond,
    quotaBeyondNeeded: input.quotaConsumed - needed - beyond.retry - beyond.serviceRestart,
    forgotten: { bulks: forgotten.bulks.size, tasks: forgotten.tasks },
    resultsOfOtherContent,
    reusedNeverLookedUp,
    otherSample: [...others].slice(0, 10).map((c) => ({
      contentKey: c,
      payments: input.bulks.flatMap((b) =>
        b.tasks
          .filter((t) => t.contentKey === c)
          .map((t) => ({
            bulkId: b.id,
            createdAt: b.createdAt,
            life: b.life,
            ...(t.status ? { status: t.status } : {}),
          })),
      ),
      records: [...contentAt]
        .filter(([, content]) => content === c)
        .map(([position]) => ({
          position,
          results: input.results
            .filter((r) => r.position === position)
            .map((r) => ({ bulkId: r.bulkId, reused: r.reused })),
        })),
    })),
    validRecords: contentAt.size,
    distinctContents: new Set(contentAt.values()).size,
  };
}

/** The content key of every input record that decodes and maps; the rest are not valid records. */
async function contentsOf(
  decode: (value: Buffer) => Promise<unknown>,
  inputs: ReadMessage[],
): Promise<Map<string, string>> {
  const contents = new Map<string, string>();
  for (const message of inputs) {
    if (message.value === null) continue;
    try {
      const partner = (await decode(message.value)) as PartnerRecord;
      contents.set(`${message.partition}:${message.offset}`, contentKey(toJsonRecord(partner)));
    } catch {
      // Malformed: its account is the dead letter, not a lookup.
    }
  }
  return contents;
}

/** Per position: its own content and every newer version's of the same key in its partition. */
function acceptableContents(inputs: ReadMessage[], contentAt: Map<string, string>): Map<string, Set<string>> {
  const byKey = new Map<string, { offset: number; position: string }[]>();
  for (const message of inputs) {
    const position = `${message.partition}:${message.offset}`;
    if (!contentAt.has(position)) continue;
    const key = `${message.partition}/${message.key?.toString('utf8') ?? ''}`;
    const list = byKey.get(key) ?? [];
    list.push({ offset: Number(message.offset), position });
    byKey.set(key, list);
  }
  const acceptable = new Map<string, Set<string>>();
  for (const versions of byKey.values()) {
    versions.sort((a, b) => a.offset - b.offset);
    const newer = new Set<string>();
    for (let i = versions.length - 1; i >= 0; i -= 1) {
      const { position } = versions[i] as { position: string };
      newer.add(contentAt.get(position) as string);
      acceptable.set(position, new Set(newer));
    }
  }
  return acceptable;
}
