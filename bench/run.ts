// The benchmark suite: `npm run bench [-- --only overhead,latency] [--scale 0.05] [--runs 3]`.
// Starts one Kafka broker (the first of the configured versions) and the schema registry,
// runs each benchmark, writes <name>.json and summary.md, and prints the summary table. Only a
// run of the whole suite writes them to bench/results, the committed results that
// docs/BENCHMARKS.md describes; a partial run (--only) writes them to bench/results/partial/
// (git-ignored), so that it cannot leave the committed files describing a run that never was.
// BENCH_SCALE and BENCH_RUNS are the flags' environment forms; scale 1 is the documented full
// run (about 15 minutes on two cores).
import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { format, resolveConfig } from 'prettier';
import { defaultInfrastructureOptions, startInfrastructure, stopOnSignal } from '../deploy/local/infra.ts';
import { brokerLimit } from './broker/limit.ts';
import { latencyUnderLoad, type LatencyMaximum } from './pipeline/latency.ts';
import { memoryDrain, memoryDrainSetting } from './pipeline/memory.ts';
import { naiveClient } from './pipeline/naive-client.ts';
import { pipelineMaximum, pipelineOverhead } from './pipeline/overhead.ts';
import { quotaEfficiency } from './pipeline/quota.ts';
import { rerunBesideLive } from './pipeline/rerun.ts';
import { scaleOut } from './pipeline/scale.ts';
import { stateRestart } from './pipeline/state.ts';
import { allocationProfileKind } from './support/allocation-profile.ts';
import { killChildren } from './support/children.ts';
import { createContext, type BenchContext } from './support/context.ts';
import { warmInstantSandbox } from './support/drain.ts';
import { describeMachine, type Machine } from './support/machine.ts';
import { matchingRuns } from './support/matching-runs.ts';
import { meanRecordBytes, upstream } from './support/partners.ts';
import { machineLine, markdownTable, summaryRows, textTable, type Results } from './support/report.ts';
import { spread } from './support/stats.ts';

const BENCHMARKS = [
  'matching',
  'overhead',
  'naive',
  'quota',
  'memory',
  'latency',
  'broker',
  'state',
  'rerun',
  'scale',
] as const;
type Name = (typeof BENCHMARKS)[number];

const resultsDir = new URL('./results/', import.meta.url);
const partialResultsDir = new URL('./partial/', resultsDir);

const USAGE = `usage: npm run bench [-- options]   (node bench/run.ts [options])

  --only a,b   run only these benchmarks (BENCH_ONLY); known: ${BENCHMARKS.join(', ')}
  --scale x    multiply record counts and durations (BENCH_SCALE; default 1, the documented run)
  --runs n     repetitions of each figure, reported as median (min-max) (BENCH_RUNS; default 3)
  -h, --help   print this and exit

Only a run of the whole suite writes bench/results/<name>.json and summary.md, the committed
results; a partial run (--only) writes them to bench/results/partial/ (git-ignored).
Environment variables (BENCH_MEMORY_DRAIN, BENCH_LATENCY_RATE, ...): docs/BENCHMARKS.md.`;

function options() {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        only: { type: 'string' },
        scale: { type: 'string', default: process.env.BENCH_SCALE ?? '1' },
        runs: { type: 'string', default: process.env.BENCH_RUNS ?? '3' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const only = (values.only ?? process.env.BENCH_ONLY)?.split(',').map((s) => s.trim());
  const unknown = only?.filter((name) => !BENCHMARKS.includes(name as Name)) ?? [];
  if (unknown.length > 0)
    throw new Error(`unknown benchmark(s) ${unknown.join(', ')}; known: ${BENCHMARKS.join(', ')}`);
  const scale = Number(values.scale);
  const runs = Number(values.runs);
  if (!(scale > 0) || !Number.isInteger(runs) || runs < 1)
    throw new Error('--scale must be > 0, --runs a whole number >= 1');
  // Checked here so that a misspelt value fails before the infrastructure starts, not in a child.
  allocationProfileKind(process.env.BENCH_ALLOC_PROF);
  memoryDrainSetting(process.env.BENCH_MEMORY_DRAIN);
  const selected = BENCHMARKS.filter((name) => !only || only.includes(name));
  const outputDir = selected.length === BENCHMARKS.length ? resultsDir : partialResultsDir;
  return { selected, scale, runs, outputDir };
}

/** Writes a result file formatted as the repository's prettier settings want it. */
async function writeFormatted(url: URL, text: string): Promise<void> {
  const filepath = fileURLToPath(url);
  const options = (await resolveConfig(filepath)) ?? {};
  await writeFile(url, await format(text, { ...options, filepath }));
}

async function save(
  dir: URL,
  name: string,
  machine: Machine,
  context: BenchContext,
  seconds: number,
  result: unknown,
) {
  await mkdir(dir, { recursive: true });
  const file = new URL(`${name}.json`, dir);
  const body = { benchmark: name, machine, scale: context.scale, runs: context.runs, seconds, result };
  await writeFormatted(file, JSON.stringify(body, null, 2));
}

/** The pipeline's maximum for the latency load: the overhead benchmark's when it ran before, else drains of its own. */
async function measuredMaximum(context: BenchContext, results: Results): Promise<LatencyMaximum> {
  const overhead = results.overhead;
  const [source, drains] = overhead
    ? (['overhead', overhead.runs.map((r) => r.pipeline.recordsPerSecond)] as const)
    : (['drain', await pipelineMaximum(context)] as const);
  return { recordsPerSecond: spread(drains).median, source, drains };
}

async function main(): Promise<string[]> {
  const { selected, scale, runs, outputDir } = options();
  const started = Date.now();
  const infraOptions = defaultInfrastructureOptions();
  const kafkaVersions = infraOptions.kafkaVersions.slice(0, 1);
  const needsKafka = selected.some((name) => name !== 'matching');
  // On Ctrl-C the broker's and registry's JVMs would outlive this process; the benchmarks'
  // children too, killed first (stopOnSignal exits once the infrastructure is stopped).
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, killChildren);
  const startedUp = stopOnSignal();
  const infra = needsKafka ? await startInfrastructure({ ...infraOptions, kafkaVersions }) : undefined;
  if (infra) startedUp(infra);
  const kafkaVersion = infra ? (infra.brokers[0]?.version ?? 'unknown') : 'none';
  const machine = describeMachine(kafkaVersion);
  console.log(`partner-enrich benchmarks: scale ${scale}, ${runs} runs each; ${machineLine(machine)}`);
  if (infra)
    console.log(`infrastructure (${infra.mode}) ready in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  const context = createContext(
    { scale, runs },
    {
      kafkaVersion,
      bootstrap: infra?.brokers[0]?.bootstrap ?? '',
      registryUrl: infra?.schemaRegistryUrl ?? '',
    },
    warmInstantSandbox,
  );
  const results: Results = {};
  const timings: Record<string, number> = {};
  const run: Record<Name, () => Promise<unknown>> = {
    matching: async () => {
      const organizations = Math.max(5_000, Math.round(100_000 * Math.min(1, scale)));
      return (results.matching = matchingRuns(organizations, runs, context.log));
    },
    overhead: async () => (results.overhead = await pipelineOverhead(context)),
    naive: async () => (results.naive = await naiveClient(context)),
    quota: async () => (results.quota = await quotaEfficiency(context)),
    memory: async () => (results.memory = await memoryDrain(context)),
    latency: async () =>
      (results.latency = await latencyUnderLoad(context, () => measuredMaximum(context, results))),
    broker: async () => (results.broker = await brokerLimit(context, meanRecordBytes(upstream(2_000)))),
    state: async () => (results.state = await stateRestart(context)),
    rerun: async () => (results.rerun = await rerunBesideLive(context)),
    scale: async () => (results.scale = await scaleOut(context)),
  };
  const failed: string[] = [];
  try {
    for (const name of selected) {
      console.log(`\n# ${name}`);
      const at = Date.now();
      try {
        const result = await run[name]();
        timings[name] = (Date.now() - at) / 1000;
        await save(outputDir, name, machine, context, timings[name], result);
        console.log(`  (${timings[name].toFixed(0)} s)`);
      } catch (error) {
        failed.push(name);
        console.error(`  ${name} failed:`, error);
        killChildren();
      }
    }
  } finally {
    await context.close();
    await infra?.stop();
  }
  const rows = summaryRows(results);
  const total = (Date.now() - started) / 1000;
  console.log(
    `\n${textTable(rows)}\n\ntotal ${total.toFixed(0)} s (${Object.entries(timings)
      .map(([n, s]) => `${n} ${s.toFixed(0)} s`)
      .join(', ')})`,
  );
  const markdown = [
    `Machine: ${machineLine(machine)}. Scale ${scale}, ${runs} runs per figure, total ${total.toFixed(0)} s.`,
    '',
    markdownTable(rows),
    '',
  ].join('\n');
  await writeFormatted(new URL('summary.md', outputDir), markdown);
  console.log(`results in ${fileURLToPath(outputDir)}`);
  return failed;
}

const failed = await main();
if (failed.length > 0) console.error(`\nfailed: ${failed.join(', ')}`);
// Sockets of closed clients can keep the loop alive a little longer; the work is done.
process.exit(failed.length > 0 ? 1 : 0);
