import type { Command } from 'commander';
import {
  createLogger,
  createMetrics,
  startHealthServer,
  startTracing,
  subscribeMetrics,
  type HealthServer,
} from '../../observability/index.ts';
import { combineObservers } from '../../pipeline/ports.ts';
import { eventObserver } from '../../pipeline/event-observer.ts';
import { rerunScheduleSpec, startRerunSchedule, type RerunSchedule } from '../../rerun/rerun-schedule.ts';
import { createKafka, createKafkaEnrichment, type Enrichment } from '../enrichment.ts';
import type { KafkaLog } from '../../kafka/kafkajs-log.ts';
import { ExitPath } from '../exit-path.ts';
import { startLagReporter } from '../lag-reporter.ts';
import { logObserver } from '../log-observer.ts';
import type { ConfigInput } from '../../config/index.ts';
import { logReruns } from '../rerun-log.ts';
import { commandConfig } from '../options.ts';

/** Closing the clients after the grace period: disconnects, the last commit, the servers. */
const CLOSE_BUDGET_MS = 10_000;

/** The flags of the rerun schedule, each one an option of the `rerunSchedule` section. */
interface RunFlags {
  delivery?: string;
  rerunEvery?: string;
  rerunCron?: string;
  rerunTimezone?: string;
  rerunCatchUp?: boolean;
}

export function registerRun(program: Command): void {
  program
    .command('run')
    .description(
      'enrich the Kafka input topic continuously: PartnerRecords in (Avro through the schema registry, or JSON ' +
        'with inputFormat: json); matches, events, storage and dead letters out. ' +
        'Serves /metrics, /healthz and /readyz from the start (/readyz 503 until the pipeline runs); SIGTERM, SIGINT or SIGHUP finishes in-flight work within ' +
        'shutdown.graceMs (a second signal exits at once). Exits 0 after such a stop, 2 on a failed start with an ' +
        'error code (configuration, broker, a missing topic, registry, OAuth client secret, state.dir, port; closing ' +
        'bounded as for a stop, a signal meanwhile exits at once with that code), 1 on ' +
        'a fatal failure while running, on a second signal, or when closing outlasted shutdown.graceMs plus 10 s. ' +
        'With --rerun-every or --rerun-cron, also starts a full-storage rerun of the input topic at each slot of ' +
        'the schedule, skipped while a rerun of the topic has not ended (docs/RERUN-SCHEDULING.md).',
    )
    .option(
      '--delivery <mode>',
      'at-least-once (the default) or exactly-once: outputs and consumed offsets in one Kafka transaction ' +
        'per input partition, for read_committed consumers (delivery; docs/GUARANTEES.md)',
    )
    .option(
      '--rerun-every <interval>',
      'schedule a rerun at every multiple of this interval since 1970-01-01 UTC: 24h is every midnight UTC; ' +
        'at least 1m, at most 365d (rerunSchedule.every)',
    )
    .option(
      '--rerun-cron <expression>',
      "schedule a rerun at the times of a 5-field cron expression, e.g. '0 2 * * *'; not with --rerun-every " +
        '(rerunSchedule.cron)',
    )
    .option(
      '--rerun-timezone <zone>',
      'IANA time zone of --rerun-cron; UTC by default (rerunSchedule.timezone)',
    )
    .option(
      '--rerun-catch-up',
      'at start, create the most recent slot missed while no replica ran, if its rerun does not exist ' +
        '(rerunSchedule.catchUp)',
    )
    .action(async (flags: RunFlags, command: Command) => {
      const config = commandConfig(command, {
        source: 'kafka',
        delivery: flags.delivery as ConfigInput['delivery'],
        rerunSchedule: {
          every: flags.rerunEvery,
          cron: flags.rerunCron,
          timezone: flags.rerunTimezone,
          catchUp: flags.rerunCatchUp,
        },
      });
      const logger = createLogger({ level: config.observability.logLevel });
      const kafkaLog: KafkaLog = { logger, level: 'warn' };
      const exit = new ExitPath({ logger, boundMs: config.shutdown.graceMs + CLOSE_BUDGET_MS });
      const stopTracing = await startTracing(config.tracing, logger);
      const metrics = createMetrics();
      const unsubscribeMetrics = subscribeMetrics(metrics);
      const unsubscribeRerunLog = logReruns(logger);
      let enrichment: Enrichment | undefined;
      let health: HealthServer | undefined;
      let lag: ReturnType<typeof startLagReporter> | undefined;
      let schedule: RerunSchedule | undefined;
      let stopping = false;

      const shutdown = async (graceMs: number) => {
        stopping = true;
        await schedule?.stop();
        if (enrichment) {
          const { abandoned } = await enrichment.stop(graceMs, (step) => exit.closing(step));
          logger.info(
            { abandoned },
            'stopped; abandoned records were not committed and are read again on restart',
          );
        }
        exit.closing('closing the operations endpoint');
        await lag?.stop();
        await health?.close();
        unsubscribeMetrics();
        unsubscribeRerunLog();
        exit.closing('exporting the last traces');
        await stopTracing();
        exit.exit();
      };

      const readiness = () => {
        // Until it is built, and then until its start resolves, the pipeline is "not started".
        const pipeline = enrichment?.pipeline.readiness() ?? { reasons: ['pipeline not started'] };
        const reasons = [...(stopping ? ['stopping'] : []), ...pipeline.reasons];
        return { ready: reasons.length === 0, reasons };
      };

      try {
        // Serve, then build: a port in use refuses the start before the build writes anything
        // (output subjects, the ledger's consumer groups), as every other refusal does.
        metrics.readReady(() => readiness().ready);
        health = await startHealthServer({
          host: config.observability.metricsHost,
          port: config.observability.metricsPort,
          metrics,
          readiness,
          failing: () => exit.failure,
        });
        logger.info({ metrics: `${health.url}/metrics` }, 'operations endpoint listening');
        const building = createKafkaEnrichment(
          config,
          combineObservers(eventObserver('kafka'), logObserver(logger)),
          kafkaLog,
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
        lag = startLagReporter(createKafka(config, kafkaLog).admin(), {
          topic: config.topics.input,
          groupId: config.kafka.groupId,
        });
        void built.pipeline.failed.then((error) => exit.fail('pipeline', error));
        if ((await exit.until(built.pipeline.start().then(() => true))) === undefined)
          return await shutdown(0);
        logger.info({ topic: config.topics.input, group: config.kafka.groupId }, 'enrichment running');
        const spec = rerunScheduleSpec(config.rerunSchedule);
        if (spec && built.rerunJobs) {
          const { store, partitionCount } = built.rerunJobs;
          schedule = startRerunSchedule({
            spec,
            catchUp: config.rerunSchedule.catchUp,
            store,
            job: {
              inputTopic: config.topics.input,
              batchSize: config.rerun.batchSize,
              quotaShare: config.rerun.quotaShare,
            },
            partitionCount: async () => partitionCount,
            logger,
          });
        }
      } catch (error) {
        // A failed start: close what was opened, within the bound, then let the command report
        // the error.
        exit.failStart(error);
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
