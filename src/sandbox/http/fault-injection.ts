// Injected faults act before anything else on an API request, as an overloaded gateway would:
// the added latency, then a 429 with Retry-After or a 503, or a connection reset without any
// answer; none of them processes the request. Admin routes are never faulted, so a test can
// always switch faults off again.

import { finished } from 'node:stream/promises';
import { setTimeout as delay } from 'node:timers/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SandboxHttpError } from '../errors.ts';
import type { Faults } from '../state/faults.ts';
import type { SandboxStats } from '../state/stats.ts';
import { MAX_TIMER_MS } from '../../timer-limit.ts';

/** Throws the injected error answer; after a reset the reply is hijacked (`reply.sent`) and must be left alone. */
export async function applyRequestFaults(
  faults: Faults,
  stats: SandboxStats,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  const latencyMs = faults.latencyMs();
  if (latencyMs > 0) await delay(Math.min(latencyMs, MAX_TIMER_MS));
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
  if (fault?.kind === 'reset') {
    stats.add('injectedResets');
    // A hijacked reply runs no further hook and no handler: the request is never processed.
    reply.hijack();
    // Read to its end first, so the client has sent all of it and cannot tell whether it was.
    request.raw.resume();
    await finished(request.raw).catch(() => undefined);
    request.raw.socket.resetAndDestroy();
  }
}
