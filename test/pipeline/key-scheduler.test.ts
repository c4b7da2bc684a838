import { describe, expect, it } from 'vitest';
import { KeyScheduler } from '../../src/pipeline/key-scheduler.ts';
import type { PartnerWork, RerunOutcome, SubmittedTask } from '../../src/pipeline/records.ts';

let offset = 0;
function work(partnerId: string, kind: PartnerWork['kind'] = 'lookup', hash = `h${offset}`): PartnerWork {
  offset += 1;
  return {
    id: `w${offset}`,
    partnerId,
    kind,
    hash,
    records: [
      {
        input: {
          position: { topic: 't', partition: 0, offset },
          key: null,
          value: null,
          headers: {},
          timestamp: 0,
        },
      },
    ],
    state: 'scheduled',
    attempts: 0,
    epoch: 1,
  };
}

/** The partner's work read from another input partition (input not keyed by partner id). */
function onPartition(w: PartnerWork, partition: number): PartnerWork {
  for (const record of w.records) record.input.position = { ...record.input.position, partition };
  return w;
}

function collect() {
  const dispatched: PartnerWork[] = [];
  const scheduler = new KeyScheduler((w) => dispatched.push(w));
  /** The partner's active work (the last of it dispatched) is finished. */
  const finish = (partnerId: string) =>
    scheduler.complete(dispatched.findLast((w) => w.partnerId === partnerId) as PartnerWork);
  return { dispatched, scheduler, finish };
}

/** A rerun's copy of a stored partner, recording how it was settled. */
function rerunCopy(partnerId: string, settled: RerunOutcome[]): PartnerWork {
  const copy = work(partnerId);
  copy.rerun = {
    jobId: 'nightly',
    partition: { topic: 't', partition: 0 },
    previous: {} as NonNullable<PartnerWork['rerun']>['previous'],
    initialize: false,
    dryRun: false,
    quotaShare: () => 0.5,
    settle: (outcome) => settled.push(outcome),
  };
  return copy;
}

describe('KeyScheduler', () => {
  it("lets live work replace a rerun's copy still waiting for its bulk: the copy is superseded, the live work goes", () => {
    const { dispatched, scheduler, finish } = collect();
    const settled: RerunOutcome[] = [];
    const copy = rerunCopy('a', settled);
    scheduler.offer(copy);
    copy.state = 'queued';
    const live = work('a');
    scheduler.offer(live);

    expect(settled).toEqual([{ kind: 'superseded' }]);
    expect(copy.superseded).toBe(true);
    expect(dispatched).toEqual([copy, live]);
    expect(live.records).toHaveLength(1);
    finish('a');
    expect(scheduler.activeKeys).toBe(0);
  });

  it("keeps a rerun's copy offered while live work is under way waiting behind it, never merged into it", () => {
    const { dispatched, scheduler, finish } = collect();
    const settled: RerunOutcome[] = [];
    const live = work('a');
    scheduler.offer(live);
    const copy = rerunCopy('a', settled);
    scheduler.offer(copy);

    expect(settled).toEqual([]);
    expect(dispatched).toEqual([live]);
    expect(live.records).toHaveLength(1);
    finish('a');
    expect(dispatched).toEqual([live, copy]);
    finish('a');
    expect(scheduler.activeKeys).toBe(0);
  });

  it("lets live work replace a rerun's copy waiting behind other live work: the copy is superseded, the newer work is looked up", () => {
    const scheduled = collect();
    const { scheduler } = scheduled;
    const settled: RerunOutcome[] = [];
    const live = work('a');
    scheduler.offer(live);
    const copy = rerunCopy('a', settled);
    scheduler.offer(copy);
    const newer = work('a');
    scheduler.offer(newer);

    expect(settled).toEqual([{ kind: 'superseded' }]);
    expect(copy.superseded).toBe(true);
    expect(newer.replacedRerun).toBe(true);
    expect(drained(scheduled, 'a')).toEqual([
      `lookup@${live.records[0]?.input.position.offset}`,
      `lookup@${newer.records[0]?.input.position.offset}`,
    ]);
  });

  it("keeps a rerun's copy already in a bulk: live work waits for it, in order", () => {
    const { dispatched, scheduler, finish } = collect();
    const settled: RerunOutcome[] = [];
    const copy = rerunCopy('a', settled);
    scheduler.offer(copy);
    copy.state = 'submitted';
    const live = work('a');
    scheduler.offer(live);

    expect(settled).toEqual([]);
    expect(dispatched).toEqual([copy]);
    finish('a');
    expect(dispatched).toEqual([copy, live]);
  });

  it('dispatches different partners at once', () => {
    const { dispatched, scheduler } = collect();
    scheduler.offer(work('a'));
    scheduler.offer(work('b'));
    expect(dispatched.map((w) => w.partnerId)).toEqual(['a', 'b']);
  });

  it('folds a newer version into one still waiting in the batcher: one lookup, newest content', () => {
    const { dispatched, scheduler } = collect();
    const first = work('a', 'lookup', 'old');
    scheduler.offer(first);
    first.state = 'queued';
    scheduler.offer(work('a', 'lookup', 'new'));

    expect(dispatched).toHaveLength(1);
    expect(first.hash).toBe('new');
    expect(first.records).toHaveLength(2);
    expect(scheduler.coalesced).toBe(1);
  });

  it("folds in the newer version's earlier hash with its content: none where its order was canonical", () => {
    const { scheduler } = collect();
    const first = work('a', 'lookup', 'old');
    first.earlierHash = 'old-as-sent';
    scheduler.offer(first);
    first.state = 'queued';
    const reordered = work('a', 'lookup', 'new');
    reordered.earlierHash = 'new-as-sent';
    scheduler.offer(reordered);
    expect(first).toMatchObject({ hash: 'new', earlierHash: 'new-as-sent' });
    // Kept, the older content's earlier hash would find that content stored and skip the new one.
    scheduler.offer(work('a', 'lookup', 'newest'));
    expect(first.hash).toBe('newest');
    expect(first.earlierHash).toBeUndefined();
  });

  it('folds a record read again, whose task was recorded by the earlier hash of the same content, into waiting work', () => {
    const { scheduler } = collect();
    const first = work('a', 'lookup', 'old');
    scheduler.offer(first);
    first.state = 'queued';
    const task: SubmittedTask = { submissionId: 's1', bulkId: 'b1', taskId: 't1', hash: 'v-as-sent' };
    const again = readAgain('a', task, 'v');
    again.earlierHash = 'v-as-sent';
    scheduler.offer(again);
    expect(first.resumeFrom).toBe(task);
  });

  it('holds a newer version back while the older one is in a submitted bulk, then dispatches it', () => {
    const { dispatched, scheduler, finish } = collect();
    const first = work('a');
    scheduler.offer(first);
    first.state = 'submitted';
    const second = work('a');
    const third = work('a', 'lookup', 'newest');
    scheduler.offer(second);
    scheduler.offer(third);

    expect(dispatched).toEqual([first]);
    finish('a');
    expect(dispatched).toEqual([first, second]);
    expect(second.records).toHaveLength(2);
    expect(second.hash).toBe('newest');
  });

  it('keeps a delete between two lookups in input order', () => {
    const { dispatched, scheduler, finish } = collect();
    const first = work('a');
    scheduler.offer(first);
    first.state = 'submitted';
    const deletion = work('a', 'delete');
    const recreate = work('a');
    scheduler.offer(deletion);
    scheduler.offer(recreate);

    finish('a');
    expect(dispatched.at(-1)).toBe(deletion);
    finish('a');
    expect(dispatched.at(-1)).toBe(recreate);
    finish('a');
    expect(scheduler.activeKeys).toBe(0);
  });

  /** The input offsets of each dispatched piece of work, with its kind, once every one completed. */
  function drained(
    { scheduler, dispatched, finish }: ReturnType<typeof collect>,
    partnerId: string,
  ): string[] {
    while (scheduler.activeKeys > 0) finish(partnerId);
    return dispatched.map((w) => `${w.kind}@${w.records.map((r) => r.input.position.offset).join('+')}`);
  }

  it('regression: a lookup after a delete never joins the lookup before it while that one waits in the batcher (it went out first, and the delete erased it)', () => {
    const scheduled = collect();
    const { scheduler } = scheduled;
    const first = work('a');
    scheduler.offer(first);
    first.state = 'queued';
    const deletion = work('a', 'delete');
    const recreate = work('a');
    scheduler.offer(deletion);
    scheduler.offer(recreate);
    const at = (w: PartnerWork) => w.records[0]?.input.position.offset;
    expect(drained(scheduled, 'a')).toEqual([
      `lookup@${at(first)}`,
      `delete@${at(deletion)}`,
      `lookup@${at(recreate)}`,
    ]);
  });

  it('regression: a lookup after a delete never joins the waiting lookup before that delete', () => {
    const scheduled = collect();
    const { scheduler } = scheduled;
    const first = work('a');
    scheduler.offer(first);
    first.state = 'submitted';
    const second = work('a');
    const deletion = work('a', 'delete');
    const recreate = work('a');
    const again = work('a');
    for (const w of [second, deletion, recreate, again]) scheduler.offer(w);
    const at = (w: PartnerWork) => w.records[0]?.input.position.offset;
    expect(drained(scheduled, 'a')).toEqual([
      `lookup@${at(first)}`,
      `lookup@${at(second)}`,
      `delete@${at(deletion)}`,
      `lookup@${at(recreate)}+${at(again)}`,
    ]);
  });

  /** A record read again after a restart: an earlier run's task answered it (coalesced into `hash`). */
  function readAgain(partnerId: string, task: SubmittedTask, hash = task.hash): PartnerWork {
    const again = work(partnerId, 'lookup', hash);
    again.resumeFrom = task;
    return again;
  }

  it('regression: a record read again after a kill is answered by the bulk that answered it, not by a newer version arriving meanwhile (its MatchResults came from two bulks)', () => {
    const scheduled = collect();
    const { scheduler } = scheduled;
    const task: SubmittedTask = { submissionId: 's1', bulkId: 'b1', taskId: 't1', hash: 'v2' };
    const first = readAgain('a', task, 'v0');
    scheduler.offer(first);
    first.state = 'submitted'; // resuming b1
    const second = readAgain('a', task, 'v1');
    const third = readAgain('a', task);
    const newer = work('a', 'lookup', 'v3');
    for (const w of [second, third, newer]) scheduler.offer(w);
    const at = (w: PartnerWork) => w.records[0]?.input.position.offset;
    expect(drained(scheduled, 'a')).toEqual([
      `lookup@${at(first)}`,
      `lookup@${at(second)}+${at(third)}`,
      `lookup@${at(newer)}`,
    ]);
    expect(second.resumeFrom).toBe(task);
    expect(newer.resumeFrom).toBeUndefined();
  });

  it('folds a record read again into older live work that waits: both are answered by its earlier task', () => {
    const { dispatched, scheduler, finish } = collect();
    const first = work('a');
    scheduler.offer(first);
    first.state = 'submitted';
    const live = work('a');
    scheduler.offer(live);
    const task: SubmittedTask = { submissionId: 's1', bulkId: 'b1', taskId: 't1', hash: 'v2' };
    scheduler.offer(readAgain('a', task));
    finish('a');
    expect(dispatched).toEqual([first, live]);
    expect(live.records).toHaveLength(2);
    expect(live.resumeFrom).toBe(task);
  });

  it("regression: live work waiting behind a rerun's copy in its retry's backoff is not dropped when the copy is queued again and superseded", () => {
    const scheduled = collect();
    const { scheduler } = scheduled;
    const settled: RerunOutcome[] = [];
    const copy = rerunCopy('a', settled);
    scheduler.offer(copy);
    copy.state = 'scheduled'; // its task FAILED: queued again after a backoff
    const live = work('a');
    scheduler.offer(live);
    copy.state = 'queued';
    const newer = work('a', 'lookup', 'newest');
    scheduler.offer(newer);
    const at = (w: PartnerWork) => w.records[0]?.input.position.offset;
    expect(drained(scheduled, 'a')).toEqual([`lookup@${at(copy)}`, `lookup@${at(live)}+${at(newer)}`]);
    expect(settled).toEqual([]);
  });

  it("regression: a partner's records on two partitions (input not keyed by partner id) were one key: the second partition's work waited behind the first's, the first's revocation dropped it, never dispatched, and its partition's commits stalled; now each partition schedules the partner apart", () => {
    const { dispatched, scheduler, finish } = collect();
    const first = work('a');
    scheduler.offer(first);
    first.state = 'submitted';
    const second = onPartition(work('a'), 1);
    scheduler.offer(second);
    expect(dispatched).toEqual([first, second]);
    scheduler.drop((w) => w.records[0]?.input.position.partition === 0);
    const third = onPartition(work('a'), 1);
    scheduler.offer(third);
    expect(dispatched).toEqual([first, second]);
    finish('a');
    expect(dispatched).toEqual([first, second, third]);
    finish('a');
    expect(scheduler.activeKeys).toBe(0);
  });

  it('regression: a version read from another partition was merged into the waiting work of the first, so the revocation of either dropped the records of both', () => {
    const { dispatched, scheduler } = collect();
    const active = work('a');
    scheduler.offer(active);
    const queued = work('a');
    scheduler.offer(queued);
    queued.state = 'queued';
    const elsewhere = onPartition(work('a'), 1);
    scheduler.offer(elsewhere);
    expect(queued.records).toHaveLength(1);
    expect(dispatched).toEqual([active, elsewhere]);
  });
});
