import type { Command } from 'commander';
import {
  createLogger,
  createMetrics,
  startHealthServer,
  subscribeMetrics,
} from '../../observability/index.ts';
import { combineObservers } from '../../pipeline/ports.ts';
import { eventObserver } from '../../pipeline/event-observer.ts';
import { createKafkaEnrichment } from '../enrichment.ts';
import { startLagReporter } from '../lag-reporter.ts';
import { logObserver } from '../log-observer.ts';
import { commandConfig } from '../options.ts';

export function registerRun(program: Command): void {
  program
    .command('run')
    .description(
      'enrich the Kafka input topic continuously: Avro PartnerRecords in; matches, events, storage and dead letters out. ' +
        'Serves /metrics, /healthz and /readyz; SIGTERM finishes in-flight work within shutdown.graceMs.',
    )
    .action(async (_options, command: Command) => {
      const config = commandConfig(command, { source: 'kafka' });
      const logger = createLogger({ level: config.observability.logLevel });
      const metrics = createMetrics();
      const unsubscribeMetrics = subscribeMetrics(metrics);
      let running = false;
      const health = await startHealthServer({
        host: config.observability.metricsHost,
        port: config.observability.metricsPort,
        metrics,
        readiness: () => {
          const failure = enrichment?.pipeline.failure;
          const reasons = [
            ...(running ? [] : ['pipeline not started']),
            ...(failure ? [failure.message] : []),
          ];
          return { ready: reasons.length === 0, reasons };
        },
      });
      logger.info({ metrics: `${health.url}/metrics` }, 'operations endpoint listening');
      const enrichment = await createKafkaEnrichment(
        config,
        combineObservers(eventObserver('kafka'), logObserver(logger)),
      );
      const lag = startLagReporter(config);
      await enrichment.pipeline.start();
      running = true;
      logger.info({ topic: config.topics.input, group: config.kafka.groupId }, 'enrichment running');

      await new Promise<void>((resolve) => {
        const watchdog = setInterval(() => enrichment.pipeline.failure && resolve(), 1000);
        const stop = () => {
          clearInterval(watchdog);
          resolve();
        };
        process.once('SIGTERM', stop);
        process.once('SIGINT', stop);
      });
      running = false;
      const failure = enrichment.pipeline.failure;
      if (failure)
        logger.fatal(
          { err: failure },
          'stopping after a failure; uncommitted records are read again on restart',
        );
      else logger.info({ graceMs: config.shutdown.graceMs }, 'stopping: finishing in-flight work');
      const { abandoned } = await enrichment.stop(config.shutdown.graceMs);
      logger.info(
        { abandoned },
        'stopped; abandoned records were not committed and are read again on restart',
      );
      await lag.stop();
      await health.close();
      unsubscribeMetrics();
      process.exitCode = failure ? 1 : 0;
    });
}
