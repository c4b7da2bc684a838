// A close that can hang (a client waiting out its own retries) gets a bound, so that a stop goes
// on to what comes after it instead of spending the whole exit bound there.

/**
 * Waits for `promise` at most `ms`: true when it fulfilled in time, false when it was still
 * pending then (it is left to finish on its own); rejects when it rejected in time.
 */
export async function finishedWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const pending = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms).unref();
  });
  try {
    return await Promise.race([promise.then(() => true), pending]);
  } finally {
    clearTimeout(timer);
  }
}
