// 2. Against a naive client: the same records, the sandbox answering every request after
// 20 ms, partner-enrich (bulks) against one v4 lookup per record, serially and 16 at a time.
// The serial loop runs on a sample (the first records): at 20 ms a request, all of them
// would take minutes; records/s is what is compared.
import { benchSandbox, type BenchContext } from '../support/context.ts';
import { drainWithPipeline, produceDistinct } from '../support/drain.ts';
import type { WorkerResult } from '../support/jobs.ts';
import { memoizeLookups } from '../support/lookup-memo.ts';
import { drainNaive } from '../support/naive-drain.ts';
import { spread, type Spread } from '../support/stats.ts';
import { deleteTopics } from '../support/topics.ts';

export const LATENCY_MS = 20;
export const CONCURRENCY = 16;
/** Distinct lookup contents: both of the sandbox's caches hold them after the warm-up. */
const CONTENTS = 2_000;

export interface NaiveClientResult {
  latencyMs: number;
  records: number;
  serialSample: number;
  pipeline: Spread;
  concurrent: Spread;
  serial: Spread;
  /** partner-enrich records/s over the client's, within each run. */
  vsSerial: Spread;
  vsConcurrent: Spread;
  runs: { pipeline: WorkerResult; concurrent: WorkerResult; serial: WorkerResult }[];
}

export async function naiveClient(context: BenchContext): Promise<NaiveClientResult> {
  const sandbox = await benchSandbox();
  memoizeLookups(sandbox);
  const records = context.count(20_000);
  const serialSample = context.count(1_000, 200);
  const backlog = await produceDistinct(context, 'naive', records, CONTENTS);
  const warmup = await produceDistinct(context, 'naive-warmup', CONTENTS, CONTENTS);
  try {
    // Fill the bulk and the v4 caches before the latency is switched on.
    await drainWithPipeline(context, sandbox, warmup.topic, CONTENTS);
    await drainNaive(context, sandbox, warmup.topic, CONTENTS, CONCURRENCY);
    sandbox.state.faults.update({ latencyMs: LATENCY_MS });
    const runs: NaiveClientResult['runs'] = [];
    for (let run = 1; run <= context.runs; run += 1) {
      const pipeline = await drainWithPipeline(context, sandbox, backlog.topic, records);
      const concurrent = await drainNaive(context, sandbox, backlog.topic, records, CONCURRENCY);
      const serial = await drainNaive(context, sandbox, backlog.topic, serialSample, 1);
      runs.push({ pipeline, concurrent, serial });
      context.log(
        `run ${run}: pipeline ${pipeline.recordsPerSecond.toFixed(0)}, concurrency ${CONCURRENCY} ${concurrent.recordsPerSecond.toFixed(0)}, serial ${serial.recordsPerSecond.toFixed(1)} records/s`,
      );
    }
    return {
      latencyMs: LATENCY_MS,
      records,
      serialSample,
      pipeline: spread(runs.map((r) => r.pipeline.recordsPerSecond)),
      concurrent: spread(runs.map((r) => r.concurrent.recordsPerSecond)),
      serial: spread(runs.map((r) => r.serial.recordsPerSecond)),
      vsSerial: spread(runs.map((r) => r.pipeline.recordsPerSecond / r.serial.recordsPerSecond)),
      vsConcurrent: spread(runs.map((r) => r.pipeline.recordsPerSecond / r.concurrent.recordsPerSecond)),
      runs,
    };
  } finally {
    await deleteTopics(context.kafka, [backlog.topic, warmup.topic]);
    await sandbox.close();
  }
}
