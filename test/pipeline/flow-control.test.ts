import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createMetrics, subscribeMetrics } from '../../src/observability/index.ts';
import { eventObserver } from '../../src/pipeline/event-observer.ts';
import { FlowControl } from '../../src/pipeline/flow-control.ts';
import type { PartitionRef, RecordSource } from '../../src/pipeline/ports.ts';

const p0: PartitionRef = { topic: 'in', partition: 0 };
const p1: PartitionRef = { topic: 'in', partition: 1 };

/** What the pipeline asked of its source (a recording stand-in for the Kafka consumer), and its fetch wait. */
function recordingSource(resumeDelayMs?: number) {
  const calls: string[] = [];
  const refs = (partitions: PartitionRef[]) => partitions.map((p) => p.partition).join(',');
  const source = {
    ...(resumeDelayMs === undefined ? {} : { resumeDelayMs }),
    pause: (partitions: PartitionRef[]) => calls.push(`pause ${refs(partitions)}`),
    resume: (partitions: PartitionRef[]) => calls.push(`resume ${refs(partitions)}`),
  } as unknown as RecordSource;
  return { source, calls };
}

function flowOver(resumeDelayMs?: number) {
  const { source, calls } = recordingSource(resumeDelayMs);
  const observed: string[] = [];
  const flow = new FlowControl(source, {
    intakePaused: (reason) => observed.push(`paused ${reason}`),
    intakeResumed: (reason) => observed.push(`resumed ${reason}`),
  });
  flow.assigned([p0, p1]);
  calls.length = 0; // the first apply tells the source either way
  return { flow, calls, observed };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('pausing the source', () => {
  it('pauses every partition at once for backpressure', () => {
    const { flow, calls } = flowOver(250);
    flow.pause('backpressure');
    expect(calls).toEqual(['pause 0,1']);
    flow.resume('backpressure');
    expect(calls).toEqual(['pause 0,1', 'resume 0,1']);
  });

  // Paused at once, a source whose resume takes a fetch wait (Kafka, 250 ms) held the records
  // of a quota pause that ended sooner (the window reset) for the whole wait.
  it('does not pause the source for a quota pause shorter than its resume delay', () => {
    const { flow, calls, observed } = flowOver(250);
    flow.pause('quota');
    expect(flow.reasons).toEqual(['quota']);
    vi.advanceTimersByTime(249);
    flow.resume('quota');
    vi.advanceTimersByTime(1_000);
    expect(calls).toEqual([]);
    expect(observed).toEqual(['paused quota', 'resumed quota']);
  });

  it('pauses the source once the quota has been out for its resume delay', () => {
    const { flow, calls } = flowOver(250);
    flow.pause('quota');
    vi.advanceTimersByTime(250);
    expect(calls).toEqual(['pause 0,1']);
    flow.resume('quota');
    expect(calls).toEqual(['pause 0,1', 'resume 0,1']);
  });

  it('pauses for the quota at once where the source resumes at once (a file)', () => {
    const { flow, calls } = flowOver();
    flow.pause('quota');
    expect(calls).toEqual(['pause 0,1']);
  });

  it('keeps the source paused for backpressure when the quota comes back, and for the quota after its delay', () => {
    const { flow, calls } = flowOver(250);
    flow.pause('quota');
    flow.pause('backpressure');
    expect(calls).toEqual(['pause 0,1']);
    flow.resume('backpressure');
    expect(calls).toEqual(['pause 0,1', 'resume 0,1']);
    vi.advanceTimersByTime(250);
    expect(calls).toEqual(['pause 0,1', 'resume 0,1', 'pause 0,1']);
  });

  it('pauses one partition at once for its own reason while the quota pause waits', () => {
    const { flow, calls } = flowOver(250);
    flow.pause('quota');
    flow.pause('schema-registry', p1);
    expect(calls).toEqual(['pause 1']);
    vi.advanceTimersByTime(250);
    expect(calls).toEqual(['pause 1', 'pause 0']);
  });
});

describe('a revoked partition and the pause reasons it held', () => {
  // Partitions held for reasons of their own ('restoring', 'schema-registry') that were revoked
  // (a rebalance during a restore, a registry outage) took their reason away without a word:
  // the pipeline's observers never heard it end. partner_enrich_intake_paused stayed 1 on a
  // replica that fetched everything, the log never said 'intake resumed', and the reason's
  // next pause was not counted (intake_pauses_total) since it had never ended.
  it('regression: a partition revoked while paused for its own reason left intake_paused at 1', async () => {
    const { source } = recordingSource(250);
    const metrics = createMetrics();
    const unsubscribe = subscribeMetrics(metrics);
    try {
      const observed: string[] = [];
      const events = eventObserver('kafka');
      const flow = new FlowControl(source, {
        intakePaused: (reason) => (observed.push(`paused ${reason}`), events.intakePaused?.(reason)),
        intakeResumed: (reason) => (observed.push(`resumed ${reason}`), events.intakeResumed?.(reason)),
      });
      const paused = async () =>
        (await metrics.registry.getSingleMetric('partner_enrich_intake_paused')?.get())?.values[0]?.value;
      flow.assigned([p0, p1]);
      flow.pause('restoring', p1);
      flow.pause('schema-registry', p1);
      expect(await paused()).toBe(1);
      flow.revoked([p1]);
      // Its restore ending after the revocation tells nothing new.
      flow.resume('restoring', p1);
      expect(flow.reasons).toEqual([]);
      expect(observed).toEqual([
        'paused restoring',
        'paused schema-registry',
        'resumed restoring',
        'resumed schema-registry',
      ]);
      expect(await paused()).toBe(0);
      // A reason another partition still holds is not over.
      flow.assigned([p1]);
      flow.pause('restoring', p0);
      flow.pause('restoring', p1);
      flow.revoked([p1]);
      expect(observed.at(-1)).toBe('paused restoring');
      expect(await paused()).toBe(1);
    } finally {
      unsubscribe();
    }
  });
});
