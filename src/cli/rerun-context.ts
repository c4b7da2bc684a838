// What every `rerun` subcommand works with: the jobs and progress read from the state topic,
// the input topics' partition counts, and the view of a job derived from both.
import type { Admin } from 'kafkajs';
import type { Config } from '../config/index.ts';
import { KafkaRerunJobStore } from '../kafka/rerun-store.ts';
import { TopicReaders } from '../kafka/topic-reader.ts';
import { describeRefused } from '../kafka/topic-presence.ts';
import { RerunError } from '../rerun/errors.ts';
import type { RerunJob } from '../rerun/rerun-job.ts';
import { rerunView, type RerunView } from '../rerun/rerun-view.ts';
import { reachableKafka } from './enrichment.ts';

export interface RerunContext {
  readonly store: KafkaRerunJobStore;
  /** Partitions of an input topic; undefined when it does not exist. */
  partitions(topic: string): Promise<number | undefined>;
  view(job: RerunJob, now?: number): Promise<RerunView>;
  /** The job, or RERUN_NOT_FOUND. */
  existing(jobId: string): RerunJob;
  close(): Promise<void>;
}

/** Opens the state topic and reads it to its end. */
export async function openRerunContext(config: Config): Promise<RerunContext> {
  const kafka = await reachableKafka(config);
  const store = new KafkaRerunJobStore(
    new TopicReaders(kafka, config.kafka.readerGroupPrefix),
    config.topics.state,
  );
  const admin = kafka.admin();
  try {
    await admin.connect();
    await store.load();
  } catch (error) {
    await Promise.all([store.close(), admin.disconnect()]).catch(() => {});
    throw error;
  }
  const partitions = partitionCounter(admin);
  return {
    store,
    partitions,
    view: async (job, now = Date.now()) =>
      rerunView({
        job,
        progress: store.progress(job.id),
        partitions: await partitions(job.inputTopic),
        jobs: store.jobs(),
        progressOf: (id) => store.progress(id),
        now,
      }),
    existing: (jobId) => {
      const job = store.job(jobId);
      if (job === undefined)
        throw new RerunError('RERUN_NOT_FOUND', `no rerun ${jobId} in state topic ${config.topics.state}`, {
          details: { jobId },
        });
      return job;
    },
    close: async () => {
      await Promise.all([store.close(), admin.disconnect()]);
    },
  };
}

/** Partition counts do not change while a command runs: asked once per topic. */
function partitionCounter(admin: Admin): (topic: string) => Promise<number | undefined> {
  const known = new Map<string, Promise<number | undefined>>();
  const ask = async (topic: string): Promise<number | undefined> => {
    if (!(await admin.listTopics()).includes(topic)) {
      const refusal = await describeRefused(admin, [topic]);
      if (refusal) throw refusal;
      return undefined;
    }
    const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
    return topics[0]?.partitions.length;
  };
  return (topic) => {
    const count = known.get(topic) ?? ask(topic);
    known.set(topic, count);
    return count;
  };
}

/** Opens the context, runs `work` with it, and closes it whatever happens. */
export async function withRerunContext<T>(
  config: Config,
  work: (context: RerunContext) => Promise<T>,
): Promise<T> {
  const context = await openRerunContext(config);
  try {
    return await work(context);
  } finally {
    await context.close();
  }
}
