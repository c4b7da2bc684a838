import { describe, expect, it } from 'vitest';
import { CommitWatermark } from '../../src/pipeline/commit-watermark.ts';

const at = (partition: number, offset: number) => ({ topic: 'partners', partition, offset });

describe('CommitWatermark', () => {
  it('commits a position only when every earlier record of the partition is done', () => {
    const watermark = new CommitWatermark();
    for (const offset of [10, 11, 12]) watermark.track(at(0, offset));

    expect(watermark.done(at(0, 12))).toBeUndefined();
    expect(watermark.done(at(0, 11))).toBeUndefined();
    expect(watermark.done(at(0, 10))).toEqual({ topic: 'partners', partition: 0, offset: 13 });
    expect(watermark.pending).toBe(0);
  });

  it('keeps partitions independent', () => {
    const watermark = new CommitWatermark();
    watermark.track(at(0, 5));
    watermark.track(at(1, 7));
    watermark.track(at(0, 6));

    expect(watermark.done(at(1, 7))).toEqual({ topic: 'partners', partition: 1, offset: 8 });
    expect(watermark.done(at(0, 6))).toBeUndefined();
    expect(watermark.pending).toBe(2);
    expect(watermark.committed()).toEqual([{ topic: 'partners', partition: 1, offset: 8 }]);
  });

  it('handles gaps in offsets (compacted topics, transaction markers)', () => {
    const watermark = new CommitWatermark();
    watermark.track(at(0, 3));
    watermark.track(at(0, 9));
    watermark.done(at(0, 9));
    expect(watermark.done(at(0, 3))).toEqual({ topic: 'partners', partition: 0, offset: 10 });
  });

  it('forgets a revoked partition', () => {
    const watermark = new CommitWatermark();
    watermark.track(at(2, 1));
    watermark.forget({ topic: 'partners', partition: 2 });
    expect(watermark.done(at(2, 1))).toBeUndefined();
    expect(watermark.pending).toBe(0);
  });

  it('regression: the commit position sticks for good after Kafka re-delivers records (each offset counts once)', () => {
    // A member that rejoins is fetched again from the committed offset, also for partitions
    // it keeps; both copies used to be tracked, and when both finished before the head
    // reached them one completion was lost and the head waited forever.
    const watermark = new CommitWatermark();
    for (const offset of [0, 1, 2]) expect(watermark.track(at(0, offset))).toBe(true);
    for (const offset of [0, 1, 2]) expect(watermark.track(at(0, offset))).toBe(false);
    expect(watermark.done(at(0, 1))).toBeUndefined();
    expect(watermark.done(at(0, 1))).toBeUndefined();
    expect(watermark.done(at(0, 2))).toBeUndefined();
    expect(watermark.done(at(0, 0))).toEqual({ topic: 'partners', partition: 0, offset: 3 });
    expect(watermark.pending).toBe(0);
    expect(watermark.track(at(0, 3))).toBe(true);
    expect(watermark.done(at(0, 3))).toEqual({ topic: 'partners', partition: 0, offset: 4 });
  });

  it('ignores a completion of an offset already committed or never tracked', () => {
    const watermark = new CommitWatermark();
    watermark.track(at(0, 5));
    watermark.track(at(0, 6));
    expect(watermark.done(at(0, 5))).toEqual({ topic: 'partners', partition: 0, offset: 6 });
    expect(watermark.done(at(0, 5))).toBeUndefined();
    expect(watermark.done(at(0, 4))).toBeUndefined();
    expect(watermark.done(at(0, 6))).toEqual({ topic: 'partners', partition: 0, offset: 7 });
  });

  it('takes a revoked partition anew when it is assigned again', () => {
    const watermark = new CommitWatermark();
    watermark.track(at(1, 10));
    watermark.forget({ topic: 'partners', partition: 1 });
    expect(watermark.track(at(1, 4))).toBe(true);
    expect(watermark.done(at(1, 4))).toEqual({ topic: 'partners', partition: 1, offset: 5 });
  });

  it('stays correct over many records', () => {
    const watermark = new CommitWatermark();
    const n = 20_000;
    for (let offset = 0; offset < n; offset += 1) watermark.track(at(0, offset));
    for (let offset = n - 1; offset >= 1; offset -= 1) expect(watermark.done(at(0, offset))).toBeUndefined();
    expect(watermark.done(at(0, 0))?.offset).toBe(n);
  });
});
