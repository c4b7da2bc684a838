// What a finished piece of work emits: the lifecycle events' ids are derived from the work,
// so a replay after a crash repeats them and consumers can drop the repeat.
import { describe, expect, it } from 'vitest';
import type { BulkTaskResult } from '../../src/bulk/bulk-api.ts';
import { PartnerEnrichError } from '../../src/errors.ts';
import { processSecrets } from '../../src/observability/secret-redactor.ts';
import {
  alreadyFinished,
  alreadyWritten,
  deadLetter,
  deleteOutputs,
  failedOutputs,
  finishedByOf,
  matchChange,
  matchedOutputs,
  type EmitContext,
  type OutputMessage,
  type StoredPartner,
  withoutValue,
} from '../../src/pipeline/outputs.ts';
import type { PartnerWork } from '../../src/pipeline/records.ts';
import { storedPartner } from '../support/stored-partners.ts';

const UUID_V5 = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const thresholds = { fullMatch: 0.9, maybeMatch: 0.7 };
const result: BulkTaskResult = { taskId: 't-1', status: 'OK', candidates: [{ svcId: 'SVC-1', score: 0.95 }] };

function work(
  kind: 'lookup' | 'delete',
  hash: string | undefined,
  offset: number,
  partnerId = 'P-1',
): PartnerWork {
  return {
    id: `w-${offset}`,
    partnerId,
    kind,
    records: [
      {
        input: {
          position: { topic: 'partners', partition: 2, offset },
          key: Buffer.from(partnerId),
          value: kind === 'delete' ? null : Buffer.from('{}'),
          headers: {},
          timestamp: 0,
        },
      },
    ],
    ...(hash === undefined ? {} : { hash }),
    state: 'submitted',
    attempts: 1,
    epoch: 1,
  };
}

/** A fresh context per call: a replay runs at another time, in another process. */
const context = (): EmitContext => ({ storageId: 'storage', now: () => Date.now() });

const eventIdOf = (messages: OutputMessage[]): string => {
  const event = messages.find((m) => m.output === 'events');
  return (event?.value as { eventId: string }).eventId;
};

const created = (w: PartnerWork, previous?: StoredPartner): string =>
  eventIdOf(matchedOutputs(w, result, 'bulk-1', previous, thresholds, context()).messages);

describe('lifecycle event ids', () => {
  it('regression: replayed events get the same eventId, so consumers can de-duplicate what a crash re-emits', () => {
    expect(created(work('lookup', 'h1', 10))).toBe(created(work('lookup', 'h1', 10)));
    expect(eventIdOf(deleteOutputs(work('delete', undefined, 11), undefined, context()))).toBe(
      eventIdOf(deleteOutputs(work('delete', undefined, 11), undefined, context())),
    );
  });

  it('gives a real change a new id: other content, other position, other type, other partner', () => {
    const previous = storedPartner('P-1', { hash: 'h0' });
    const ids = [
      created(work('lookup', 'h1', 10)),
      created(work('lookup', 'h2', 10)),
      created(work('lookup', 'h1', 12)),
      created(work('lookup', 'h1', 10), previous),
      created(work('lookup', 'h1', 10, 'P-2')),
      eventIdOf(deleteOutputs(work('delete', undefined, 10), undefined, context())),
    ];
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('keeps the id a UUID (version 5, RFC 9562 variant)', () => {
    expect(created(work('lookup', 'h1', 10))).toMatch(UUID_V5);
    expect(eventIdOf(deleteOutputs(work('delete', undefined, 11), undefined, context()))).toMatch(UUID_V5);
  });
});

describe('a partner stored by the earlier hash of the same content (identifiers in a non-canonical order)', () => {
  const reordered = (offset: number): PartnerWork => ({
    ...work('lookup', 'h1', offset),
    earlierHash: 'h1-as-sent',
  });
  const types = (messages: OutputMessage[]) =>
    messages.filter((m) => m.output === 'events').map((m) => (m.value as { type: string }).type);
  const outputs = (w: PartnerWork, previous: StoredPartner) =>
    matchedOutputs(w, result, 'bulk-1', previous, thresholds, context()).messages;

  it('is not told Updated when the content is looked up again (skip-unchanged off, or its last lookup FAILED)', () => {
    expect(types(outputs(reordered(10), storedPartner('P-1', { hash: 'h1-as-sent' })))).toEqual([]);
    expect(types(outputs(reordered(10), storedPartner('P-1', { hash: 'h0' })))).toEqual([
      'BusinessPartnerUpdated',
    ]);
  });

  it('knows the record it was written for when that record is read again', () => {
    const source = { offset: 10, timestamp: 0 };
    expect(alreadyWritten(reordered(10), storedPartner('P-1', { hash: 'h1-as-sent', source }))).toBe(true);
    expect(alreadyWritten(reordered(10), storedPartner('P-1', { hash: 'h0', source }))).toBe(false);
  });
});

describe('the older records of a coalesced lookup read again apart', () => {
  /** Partner P-1's versions at offsets 10, 11 and 12 (timestamps 1,000 ms apart), coalesced into one lookup. */
  const versions = (offsets: number[], timestamp = (offset: number) => offset * 1_000): PartnerWork => {
    const one = work('lookup', 'h12', 0);
    const [record] = one.records as [PartnerWork['records'][number]];
    return {
      ...one,
      records: offsets.map((offset) => ({
        input: {
          ...record.input,
          position: { ...record.input.position, offset },
          timestamp: timestamp(offset),
        },
      })),
    };
  };
  const stored = storedPartner('P-1', {
    hash: 'h12',
    source: matchedOutputs(versions([10, 11, 12]), result, 'bulk-1', undefined, thresholds, context()).stored
      .source,
  });

  it('names the oldest record in the stored state, with the newest', () => {
    expect(stored.source).toEqual({
      offset: 12,
      timestamp: 12_000,
      coalescedFrom: { offset: 10, timestamp: 10_000 },
    });
    expect(
      matchedOutputs(versions([12]), result, 'bulk-1', undefined, thresholds, context()).stored.source,
    ).toEqual({ offset: 12, timestamp: 12_000 });
  });

  it('regression: an older version read alone was looked up again (and the newest after it, whose state it replaced): finished as written', () => {
    expect(alreadyWritten({ ...versions([10]), hash: 'h10' }, stored)).toBe(true);
    expect(alreadyWritten({ ...versions([10, 11]), hash: 'h11' }, stored)).toBe(true);
    expect(alreadyWritten({ ...versions([11]), hash: 'h11' }, stored)).toBe(true);
    expect(alreadyWritten(versions([12]), stored)).toBe(true);
  });

  it('tells them from records outside the coalesced range, and from a recreated topic at the same offsets', () => {
    expect(alreadyWritten({ ...versions([9]), hash: 'h9' }, stored)).toBe(false);
    expect(alreadyWritten({ ...versions([13]), hash: 'h13' }, stored)).toBe(false);
    const recreated = (offset: number) => 1_800_000_000_000 + offset;
    expect(alreadyWritten({ ...versions([10], recreated), hash: 'h10' }, stored)).toBe(false);
    expect(alreadyWritten({ ...versions([11], recreated), hash: 'h11' }, stored)).toBe(false);
  });
});

describe('a tombstone read again', () => {
  it('regression: its storage tombstone named nothing, so its delete read back from the storage topic could not be told done (a tombstone read again after a kill became DELETE_UNKNOWN_PARTNER)', () => {
    const tombstone = work('delete', undefined, 11);
    (tombstone.records[0] as PartnerWork['records'][number]).input.timestamp = 1_700_000_000_000;
    const storage = deleteOutputs(tombstone, storedPartner('P-1'), context()).find(
      (m) => m.output === 'storage',
    ) as OutputMessage;
    expect(storage.value).toBeNull();
    // As kafkajs reads headers back: bytes.
    const read = Object.fromEntries(
      Object.entries(storage.headers ?? {}).map(([name, value]) => [name, Buffer.from(String(value))]),
    );
    const deletedBy = finishedByOf(read);
    expect(deletedBy).toEqual({ offset: 11, timestamp: 1_700_000_000_000 });
    expect(alreadyFinished(tombstone, deletedBy)).toBe(true);
  });

  it('is told apart from a second tombstone of the partner, and from one of a recreated topic at the same offset', () => {
    const deletedBy = { offset: 11, timestamp: 0 };
    expect(alreadyFinished(work('delete', undefined, 11), deletedBy)).toBe(true);
    expect(alreadyFinished(work('delete', undefined, 12), deletedBy)).toBe(false);
    expect(alreadyFinished(work('delete', undefined, 11), { offset: 11, timestamp: 5 })).toBe(false);
    expect(alreadyFinished(work('delete', undefined, 11), undefined)).toBe(false);
  });

  it('a storage tombstone written before the headers existed names no tombstone', () => {
    expect(finishedByOf(undefined)).toBeUndefined();
    expect(finishedByOf({ traceparent: Buffer.from('00-abc-def-01') })).toBeUndefined();
  });
});

describe('a lookup that failed for good', () => {
  const failure = new PartnerEnrichError('TASK_FAILED', 'task failed');
  /** The storage record of the failure's outputs, its headers as kafkajs reads them back: bytes. */
  const storageOf = (messages: OutputMessage[]) => {
    const storage = messages.find((m) => m.output === 'storage') as OutputMessage;
    const headers = Object.fromEntries(
      Object.entries(storage.headers ?? {}).map(([name, value]) => [name, Buffer.from(String(value))]),
    );
    return { value: storage.value, partition: storage.partition, finishedBy: finishedByOf(headers) };
  };

  it('regression: wrote no storage record, so the record read again after a kill was looked up and its FAILED result and dead letter written again', () => {
    const failed = work('lookup', 'h2', 12);
    (failed.records[0] as PartnerWork['records'][number]).input.timestamp = 1_700_000_000_000;
    const messages = failedOutputs(failed, failure, context(), undefined);
    expect(messages.map((m) => m.output)).toEqual(['matches', 'deadLetters', 'storage']);
    const storage = storageOf(messages);
    // No state stored for the partner: a storage tombstone, which deletes nothing.
    expect(storage).toEqual({
      value: null,
      partition: 2,
      finishedBy: { offset: 12, timestamp: 1_700_000_000_000 },
    });
    expect(alreadyFinished(failed, storage.finishedBy)).toBe(true);
  });

  it("keeps the partner's stored state as it was, naming the failed record", () => {
    const stored = storedPartner('P-1', { hash: 'h1', source: { offset: 3, timestamp: 0 } });
    const storage = storageOf(failedOutputs(work('lookup', 'h2', 12), failure, context(), stored));
    expect(storage.value).toMatchObject({
      partnerId: 'P-1',
      contentHash: 'h1',
      source: { offset: 3, timestamp: 0 },
    });
    expect(storage.finishedBy).toEqual({ offset: 12, timestamp: 0 });
    // The record read again is finished; a later one of the partner is not.
    expect(alreadyFinished(work('lookup', 'h2', 12), storage.finishedBy)).toBe(true);
    expect(alreadyFinished(work('lookup', 'h2', 13), storage.finishedBy)).toBe(false);
  });

  it('regression: a coalesced lookup that failed named only its newest record, and an older one read again apart after a kill was looked up again; the storage record names the oldest too', () => {
    const failed = work('lookup', 'h12', 12);
    const [newest] = failed.records as [PartnerWork['records'][number]];
    const at = (offset: number) => ({
      input: { ...newest.input, position: { ...newest.input.position, offset }, timestamp: offset },
    });
    failed.records = [at(10), at(11), at(12)];
    const storage = storageOf(failedOutputs(failed, failure, context(), undefined));
    expect(storage.finishedBy).toEqual({
      offset: 12,
      timestamp: 12,
      coalescedFrom: { offset: 10, timestamp: 10 },
    });
    const apart = (offsets: number[]): PartnerWork => ({ ...failed, records: offsets.map(at) });
    expect(alreadyFinished(apart([10]), storage.finishedBy)).toBe(true);
    expect(alreadyFinished(apart([10, 11]), storage.finishedBy)).toBe(true);
    expect(alreadyFinished(apart([12]), storage.finishedBy)).toBe(true);
    expect(alreadyFinished(apart([9]), storage.finishedBy)).toBe(false);
    expect(alreadyFinished(apart([13]), storage.finishedBy)).toBe(false);
  });

  it("a rerun's failure writes no storage record and no dead letter", () => {
    const rerun = work('lookup', 'h1', 12);
    rerun.rerun = {
      jobId: 'job-1',
      partition: { topic: 'partners', partition: 2 },
      previous: storedPartner('P-1'),
      initialize: false,
      dryRun: false,
      quotaShare: () => 1,
      settle: () => {},
    };
    expect(failedOutputs(rerun, failure, context(), storedPartner('P-1')).map((m) => m.output)).toEqual([
      'matches',
    ]);
  });
});

describe('dead letters', () => {
  it('drop the original bytes with withoutValue(), keep the reason and say how many bytes went', () => {
    const input = work('lookup', 'h1', 7).records[0]?.input;
    if (!input) throw new Error('no input');
    const letter = deadLetter(input, 'lookup', new PartnerEnrichError('TASK_FAILED', 'failed'), 3, 0);
    const dropped = withoutValue(letter);
    expect(dropped.value).toEqual(Buffer.alloc(0));
    expect(dropped.key).toEqual(letter.key);
    expect(dropped.headers).toEqual({ ...letter.headers, 'pe.value-dropped': '2' });
  });

  it("regression: a reason quoting the service (a task's status text) carried a credential it echoed into the topic; the process's secrets are redacted from it", () => {
    processSecrets.add('sk-LIVE-abcdef123456');
    const reason = new PartnerEnrichError(
      'TASK_FAILED',
      'task t1 FAILED: auth failed for key sk-LIVE-abcdef123456',
    );
    const input = work('lookup', 'h1', 7).records[0]?.input;
    if (!input) throw new Error('no input');
    const letter = deadLetter(input, 'lookup', reason, 1, 0);
    expect(letter.headers?.['pe.error.message']).toBe('task t1 FAILED: auth failed for key [REDACTED]');
  });
});

describe("a rerun's outputs", () => {
  const stored = (outcome: StoredPartner['outcome'], svcId: string | null): StoredPartner =>
    ({ hash: 'h', outcome, svcId, bestCandidate: null }) as unknown as StoredPartner;
  const rerunOf = (previous: StoredPartner, over: { initialize?: boolean; dryRun?: boolean } = {}) => {
    const w = work('lookup', 'h', 7);
    w.rerun = {
      jobId: 'nightly',
      partition: { topic: 'partners', partition: 2 },
      previous,
      initialize: over.initialize ?? false,
      dryRun: over.dryRun ?? false,
      quotaShare: () => 1,
      settle: () => {},
    };
    return w;
  };
  const emitted = (w: PartnerWork) =>
    matchedOutputs(w, result, 'bulk-1', w.rerun?.previous, thresholds, context()).messages;
  const types = (messages: OutputMessage[]) =>
    messages.filter((m) => m.output === 'events').map((m) => (m.value as { type: string }).type);

  it('names the match change: a MATCH gained or lost, another svcId, or the outcome crossing a threshold otherwise', () => {
    expect(matchChange(stored('NO_MATCH', null), stored('MATCH', 'S1'))).toBe('gainedMatch');
    expect(matchChange(stored('MATCH', 'S1'), stored('MAYBE_MATCH', 'S1'))).toBe('lostMatch');
    expect(matchChange(stored('MATCH', 'S1'), stored('MATCH', 'S2'))).toBe('svcIdChanged');
    expect(matchChange(stored('MAYBE_MATCH', 'S1'), stored('NO_MATCH', null))).toBe('outcomeChanged');
    expect(matchChange(stored('MATCH', 'S1'), stored('MATCH', 'S1'))).toBeUndefined();
    expect(matchChange(stored('NO_MATCH', null), stored('NO_MATCH', null))).toBeUndefined();
  });

  it('carries the rerun id on the MatchResult and the event; Updated only where the match changed', () => {
    const changed = emitted(rerunOf(stored('NO_MATCH', null)));
    expect(types(changed)).toEqual(['BusinessPartnerUpdated']);
    expect(changed.find((m) => m.output === 'matches')?.value).toMatchObject({ rerunId: 'nightly' });
    expect(changed.find((m) => m.output === 'events')?.value).toMatchObject({ rerunId: 'nightly' });
    // The same content looked up again with the same answer: no event, though the hash is the stored one.
    expect(types(emitted(rerunOf(stored('MATCH', 'SVC-1'))))).toEqual([]);
    expect(emitted(rerunOf(stored('MATCH', 'SVC-1'))).map((m) => m.output)).toEqual(['matches', 'storage']);
  });

  it('announces every partner as Created when initializing a new downstream, and writes nothing in a dry run', () => {
    expect(types(emitted(rerunOf(stored('MATCH', 'SVC-1'), { initialize: true })))).toEqual([
      'BusinessPartnerCreated',
    ]);
    expect(emitted(rerunOf(stored('NO_MATCH', null), { dryRun: true }))).toEqual([]);
  });
});
