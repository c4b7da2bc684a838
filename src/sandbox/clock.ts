// The sandbox reads time only through a Clock, so tests can move token expiry, quota windows
// and job progress by hand instead of waiting for them.

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export const isoAt = (ms: number): string => new Date(ms).toISOString();
