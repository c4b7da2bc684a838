// The broker cannot be made to answer a leadership error on demand: these use a stand-in for
// kafkajs's admin that fails the way CI saw it fail, with kafkajs's own error class.
import kafkajs, { type Admin } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { topicOffsets } from '../../src/kafka/topic-offsets.ts';

/** kafkajs builds these from a protocol error's entry (its types only admit an Error). */
const protocolError = (entry: { type: string; code: number; retriable: boolean; message: string }) =>
  new kafkajs.KafkaJSProtocolError(entry as unknown as Error);
const notLeader = () =>
  protocolError({
    type: 'NOT_LEADER_FOR_PARTITION',
    code: 6,
    retriable: true,
    message: 'This server is not the leader for that topic-partition',
  });
const offsets = [{ partition: 0, offset: '7', high: '7', low: '2' }];

/** An admin whose fetchTopicOffsets throws `failures` in turn, then answers; it counts metadata reads. */
function adminFailing(failures: Error[]) {
  const calls = { offsets: 0, metadata: 0 };
  const admin = {
    fetchTopicOffsets: async () => {
      calls.offsets += 1;
      const failure = failures.shift();
      if (failure) throw failure;
      return offsets;
    },
    fetchTopicMetadata: async () => {
      calls.metadata += 1;
      return { topics: [] };
    },
  } as unknown as Admin;
  return { admin, calls };
}

const noWait = async () => {};

describe("a topic's offsets", () => {
  // CI: readAll() of a topic created a moment before failed with this, once, in kafkajs's
  // fetchTopicOffsets, which retries only an unknown topic.
  it('regression: asks again after a leadership error, with the metadata read anew', async () => {
    const { admin, calls } = adminFailing([notLeader(), notLeader()]);
    expect(await topicOffsets(admin, 't', noWait)).toEqual([{ partition: 0, low: '2', high: '7' }]);
    expect(calls).toEqual({ offsets: 3, metadata: 2 });
  });

  it('fails at once on an error that asking again cannot mend', async () => {
    const denied = protocolError({
      type: 'TOPIC_AUTHORIZATION_FAILED',
      code: 29,
      retriable: false,
      message: 'Not authorized to access topics',
    });
    const { admin, calls } = adminFailing([denied]);
    await expect(topicOffsets(admin, 't', noWait)).rejects.toBe(denied);
    expect(calls.offsets).toBe(1);
  });

  it('gives up after twelve attempts, about 20 s of waits in all: longer than a crashed leader stays one (9 s)', async () => {
    const { admin, calls } = adminFailing(Array.from({ length: 20 }, notLeader));
    const waits: number[] = [];
    const recordWait = async (ms: number) => void waits.push(ms);
    await expect(topicOffsets(admin, 't', recordWait)).rejects.toMatchObject({
      type: 'NOT_LEADER_FOR_PARTITION',
    });
    expect(calls.offsets).toBe(12);
    expect(waits.reduce((sum, ms) => sum + ms, 0)).toBe(100 + 200 + 400 + 800 + 1_600 + 6 * 3_000);
  });
});
