// Injected faults act before anything else on an API request, as an overloaded gateway would:
// the added latency, then a 429 with Retry-After or a 503, neither of which processes the
// request. Admin routes are never faulted, so a test can always switch faults off again.

import { setTimeout as delay } from 'node:timers/promises';
import { SandboxHttpError } from '../errors.ts';
import type { Faults } from '../state/faults.ts';
import type { SandboxStats } from '../state/stats.ts';

export async function applyRequestFaults(faults: Faults, stats: SandboxStats): Promise<void> {
  const latencyMs = faults.latencyMs();
  if (latencyMs > 0) await delay(latencyMs);
  const fault = faults.requestFault();
  if (fault?.kind === 'throttled') {
    stats.add('injectedThrottles');
    throw new SandboxHttpError(429, 'RATE_LIMITED', 'request rate limit reached (injected); not processed', {
      headers: { 'retry-after': String(fault.retryAfterSeconds) },
    });
  }
  if (fault?.kind === 'server-error') {
    stats.add('injectedServerErrors');
    throw new SandboxHttpError(503, 'INJECTED_SERVER_ERROR', 'service unavailable (injected); not processed');
  }
}
