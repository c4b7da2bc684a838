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
    watermark.forget('partners', 2);
    expect(watermark.done(at(2, 1))).toBeUndefined();
    expect(watermark.pending).toBe(0);
  });

  it('stays correct over many records', () => {
    const watermark = new CommitWatermark();
    const n = 20_000;
    for (let offset = 0; offset < n; offset += 1) watermark.track(at(0, offset));
    for (let offset = n - 1; offset >= 1; offset -= 1) expect(watermark.done(at(0, offset))).toBeUndefined();
    expect(watermark.done(at(0, 0))?.offset).toBe(n);
  });
});
