import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
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
