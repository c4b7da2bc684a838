import { describe, expect, it } from 'vitest';
import { liveHeadroom } from '../../src/rerun/live-headroom.ts';

describe('liveHeadroom', () => {
  it("holds a rerun's next chunk while the event loop was busier than allowed, and lets it go once it is not", async () => {
    const readings = [0.95, 0.9, 0.5];
    const waits: number[] = [];
    const headroom = liveHeadroom({
      maxUtilization: 0.8,
      recheckMs: 250,
      utilization: () => readings.shift() ?? 0,
      sleep: async (ms) => void waits.push(ms),
    });
    await headroom();
    expect(waits).toEqual([250, 250]);
    expect(readings).toEqual([]);
  });

  it('lets every chunk go at once when the loop has room', async () => {
    const waits: number[] = [];
    const headroom = liveHeadroom({
      maxUtilization: 0.8,
      recheckMs: 250,
      utilization: () => 0.8,
      sleep: async (ms) => void waits.push(ms),
    });
    await headroom();
    expect(waits).toEqual([]);
  });
});
