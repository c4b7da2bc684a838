import type { Command } from 'commander';
import {
  createLogger,
  createMetrics,
  startHealthServer,
  subscribeMetrics,
  type HealthServer,
} from '../../observability/index.ts';
import { combineObservers } from '../../pipeline/ports.ts';
import { eventObserver } from '../../pipeline/event-observer.ts';
import { createKafkaEnrichment, type Enrichment } from '../enrichment.ts';
import { ExitPath } from '../exit-path.ts';
import { startLagReporter } from '../lag-reporter.ts';
import { logObserver } from '../log-observer.ts';
import { commandConfig } from '../options.ts';

/** Closing the clients after the grace period: disconnects, the last commit, the servers. */
const CLOSE_BUDGET_MS = 10_000;

export function registerRun(program: Command): void {
  program
    .command('run')
    .description(
      'enrich the Kafka input topic continuously: Avro PartnerRecords in; matches, events, storage and dead letters out. ' +
        'Serves /metrics, /healthz and /readyz once built; SIGTERM or SIGINT finishes in-flight work within ' +
        'shutdown.graceMs (a second signal exits at once). Exits non-zero on a failed start or a fatal failure.',
    )
    .action(async (_options, command: Command) => {
      const config = commandConfig(command, { source: 'kafka' });
      const logger = createLogger({ level: config.observability.logLevel });
      const exit = new ExitPath({ logger, boundMs: config.shutdown.graceMs + CLOSE_BUDGET_MS });
      const metrics = createMetrics();
      const unsubscribeMetrics = subscribeMetrics(metrics);
      let enrichment: Enrichment | undefined;
      let health: HealthServer | undefined;
      let lag: ReturnType<typeof startLagReporter> | undefined;
      let state: 'starting' | 'running' | 'stopping' = 'starting';

      const shutdown = async (graceMs: number) => {
        state = 'stopping';
        if (enrichment) {
          const { abandoned } = await enrichment.stop(graceMs);
          logger.info(
            { abandoned },
            'stopped; abandoned records were not committed and are read again on restart',
          );
        }
        await lag?.stop();
        await health?.close();
        unsubscribeMetrics();
        exit.exit();
      };

      try {
        // Build, then serve: the endpoint reports on a pipeline that exists.
        const building = createKafkaEnrichment(
          config,
          combineObservers(eventObserver('kafka'), logObserver(logger)),
        );
        enrichment = await exit.until(building);
        if (!enrichment) {
          // Stopped during start-up: whatever the build still opens is closed when it arrives.
          void building.then((late) => late.stop(0)).catch(() => {});
          return await shutdown(0);
        }
        const built = enrichment;
        metrics.readRecordsInFlight(() => built.pipeline.inFlight);
        metrics.readState(() => ({ bytes: built.state.bytes, partners: built.state.size }));
        health = await startHealthServer({
          host: config.observability.metricsHost,
          port: config.observability.metricsPort,
          metrics,
          readiness: () => {
            const pipeline = built.pipeline.readiness();
            const phase = { starting: ['pipeline not started'], running: [], stopping: ['stopping'] }[state];
            const reasons = [...phase, ...pipeline.reasons];
            return { ready: reasons.length === 0, reasons };
          },
          failing: () => exit.failure,
        });
        logger.info({ metrics: `${health.url}/metrics` }, 'operations endpoint listening');
        lag = startLagReporter(config);
        void built.pipeline.failed.then((error) => exit.fail('pipeline', error));
        if ((await exit.until(built.pipeline.start().then(() => true))) === undefined)
          return await shutdown(0);
        state = 'running';
        logger.info({ topic: config.topics.input, group: config.kafka.groupId }, 'enrichment running');
      } catch (error) {
        // A failed start: close what was opened, then let the command report the error.
        await shutdown(0);
        throw error;
      }

      const reason = await exit.stopping;
      if (reason.kind === 'failure') {
        logger.info('closing after the failure; uncommitted records are read again on restart');
        return shutdown(0);
      }
      logger.info(
        { signal: reason.signal, graceMs: config.shutdown.graceMs },
        'stopping: finishing in-flight work',
      );
      return shutdown(config.shutdown.graceMs);
    });
}
