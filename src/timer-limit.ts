// Node's timers wait at most 2^31-1 ms (about 24.8 days): a longer delay fires after 1 ms,
// with a TimeoutOverflowWarning. Waits that may be longer (a rerun's start, a schedule's next
// slot, a follow's deadline) are taken in steps of at most this.
export const MAX_TIMER_MS = 2 ** 31 - 1;
