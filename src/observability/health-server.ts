// The operations endpoint: Prometheus scrapes /metrics, the orchestrator probes /healthz
// (restart when it fails) and /readyz (route no traffic, count no capacity, while it fails).
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import type { Metrics } from './metrics.ts';

export interface Readiness {
  ready: boolean;
  /** Why not ready, e.g. "kafka consumer not connected"; empty when ready. */
  reasons: string[];
}

export interface HealthServerOptions {
  host: string;
  /** 0 picks a free port; the chosen one is in the returned url. */
  port: number;
  metrics: Pick<Metrics, 'registry'>;
  readiness: () => Readiness;
  /** Why the process is going down for good, if it is; /healthz fails from then on. Alive when absent. */
  failing?: () => string | undefined;
}

export interface HealthServer {
  /** e.g. http://127.0.0.1:9464 */
  url: string;
  close(): Promise<void>;
}

function probe(readiness: () => Readiness): Readiness {
  try {
    return readiness();
  } catch (error) {
    // A readiness check that throws is itself a reason not to take traffic.
    return { ready: false, reasons: [`readiness check failed: ${(error as Error).message}`] };
  }
}

export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  const { registry } = options.metrics;
  const app = Fastify({ logger: false });

  app.get('/metrics', async (_request, reply) => {
    reply.header('content-type', registry.contentType);
    return registry.metrics();
  });
  // Alive as long as the event loop answers and nothing fatal happened; anything deeper belongs
  // to readiness. A process on its way out after a fatal failure is not healthy, even while
  // it still answers.
  app.get('/healthz', async (_request, reply) => {
    const reason = options.failing?.();
    if (reason === undefined) return { status: 'ok' };
    reply.code(503);
    return { status: 'failing', reason };
  });
  app.get('/readyz', async (_request, reply) => {
    const readiness = probe(options.readiness);
    reply.code(readiness.ready ? 200 : 503);
    return readiness;
  });

  await app.listen({ host: options.host, port: options.port });
  const { address, family, port } = app.server.address() as AddressInfo;
  const host = family === 'IPv6' ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}`,
    close: () => app.close(),
  };
}
