// The chaos suite's lookup account (test/chaos/support/lookups.ts) on hand-made inputs, so
// that the numbers every issue-10 scenario is judged by are known to be right. The chaos
// folder is outside the unit project; this file runs with the unit tests.
import { describe, expect, it } from 'vitest';
import { toJsonRecord } from '../../src/mapping/lookup-task.ts';
import { contentKey } from '../../src/sandbox/state/bulk-audit.ts';
import type { PartnerRecord } from '../../src/serde/partner-record.ts';
import { lookupAccount, type ResultSeen } from '../chaos/support/lookups.ts';
import type { AuditedBulk } from '../chaos/support/sandbox-process.ts';
import type { ReadMessage } from '../chaos/support/topic-reader.ts';

const partner = (id: string, version: number): PartnerRecord => ({
  partnerId: id,
  sourceSystem: 'S',
  names: [`Partner ${id}`],
  legalForm: null,
  addresses: [],
  identifiers: [],
  taxNumbers: [{ type: 'V', value: String(version) }],
  changedAt: version,
});
const keyOf = (p: PartnerRecord) => contentKey(toJsonRecord(p));
const message = (offset: number, value: PartnerRecord | 'malformed'): ReadMessage =>
  ({
    partition: 0,
    offset: String(offset),
    key: Buffer.from(value === 'malformed' ? 'bad' : value.partnerId),
    value: Buffer.from(value === 'malformed' ? '{' : JSON.stringify(value)),
  }) as ReadMessage;
const bulk = (id: string, createdAt: number, tasks: [PartnerRecord, string?][], life = 0): AuditedBulk => ({
  id,
  createdAt,
  life,
  tasks: tasks.map(([p, status], i) => ({
    taskId: `${id}-${i}`,
    contentKey: keyOf(p),
    ...(status ? { status } : {}),
  })),
});
const result = (offset: number, bulkId: string | null, reused = false): ResultSeen => ({
  position: `0:${offset}`,
  bulkId,
  reused,
});
const account = (inputs: ReadMessage[], results: ResultSeen[], bulks: AuditedBulk[], quotaConsumed: number) =>
  lookupAccount({
    decode: async (value) => JSON.parse(value.toString('utf8')) as unknown,
    inputs,
    results,
    bulks,
    quotaConsumed,
  });

const a1 = partner('a', 1);
const a2 = partner('a', 2);
const b1 = partner('b', 1);

describe('chaos lookup account', () => {
  it('counts coalesced versions and a re-send of unchanged content as one lookup, nothing beyond', async () => {
    const inputs = [message(0, a1), message(1, a2), message(2, b1), message(3, { ...a2, changedAt: 9 })];
    const results = [result(0, 'B1'), result(1, 'B1'), result(2, 'B1'), result(3, 'B1', true)];
    expect(await account(inputs, results, [bulk('B1', 1, [[a2], [b1]])], 2)).toMatchObject({
      needed: 2,
      tasks: 2,
      beyondNeeded: { total: 0, retry: 0, serviceRestart: 0, other: 0 },
      quotaBeyondNeeded: 0,
      resultsOfOtherContent: 0,
      reusedNeverLookedUp: 0,
      validRecords: 4,
      distinctContents: 3,
    });
  });

  it('counts a retry after FAILED apart from content paid twice for nothing', async () => {
    const inputs = [message(0, a1), message(1, b1), message(2, 'malformed')];
    const bulks = [
      bulk('B1', 1, [
        [a1, 'FAILED'],
        [b1, 'OK'],
      ]),
      bulk('B2', 2, [[a1, 'OK']]),
      bulk('B3', 3, [[b1]]),
    ];
    const results = [result(0, 'B2'), result(1, 'B1')];
    expect(await account(inputs, results, bulks, 4)).toMatchObject({
      needed: 2,
      tasks: 4,
      beyondNeeded: { total: 2, retry: 1, serviceRestart: 0, other: 1 },
      quotaBeyondNeeded: 1,
      validRecords: 2,
    });
  });

  it('lets a restarted service cost one new lookup per task it forgot, not two', async () => {
    const inputs = [message(0, a1), message(1, b1)];
    const bulks = [bulk('B1', 1, [[a1], [b1]], 0), bulk('B2', 2, [[a1], [b1]], 1), bulk('B3', 3, [[a1]], 1)];
    const results = [result(0, 'B2'), result(1, 'B2')];
    expect(await account(inputs, results, bulks, 5)).toMatchObject({
      needed: 2,
      beyondNeeded: { total: 3, retry: 0, serviceRestart: 2, other: 1 },
      forgotten: { bulks: 1, tasks: 2 },
      quotaBeyondNeeded: 1,
    });
  });

  it('finds a result from a bulk that looked up an older version only, and a reuse of content never looked up', async () => {
    const inputs = [message(0, a1), message(1, a2), message(2, b1)];
    const results = [result(0, 'B1'), result(1, 'B1'), result(2, null, true)];
    expect(await account(inputs, results, [bulk('B1', 1, [[a1]])], 1)).toMatchObject({
      needed: 1,
      resultsOfOtherContent: 1,
      reusedNeverLookedUp: 1,
    });
  });
});
