// `partner-enrich run` as separate processes that tests kill, and what its outputs say after:
// the way an operator's supervisor runs it, read back by independent clients.
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import type { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import type { Kafka } from 'kafkajs';
import { afterAll, beforeAll, expect } from 'vitest';
import type { Config } from '../../src/config/index.ts';
import { generateDataset } from '../../src/sandbox/dataset/dataset.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { upstreamPartners } from '../../src/sandbox/upstream-partners.ts';
import type { PartnerRecord } from '../../src/serde/partner-record.ts';
import { startCli } from './cli.ts';
import {
  committedAndEndOffsets,
  createTopicsFor,
  producePartners,
  readAll,
  testTopics,
} from './enrichment.ts';
import { uniqueName } from './kafka.ts';
import { deleteSubject } from './schema-registry.ts';

export interface RunningCli {
  child: ChildProcess;
  logs: () => string;
  exited: Promise<number | null>;
}

/** Starts the command with its output collected (see startCli for `pidNamespace`). */
export function startCollected(
  args: string[],
  env: NodeJS.ProcessEnv,
  options: { pidNamespace?: boolean } = {},
): RunningCli {
  const child = startCli(args, env, options);
  let logs = '';
  child.stdout?.on('data', (chunk: Buffer) => (logs += chunk));
  child.stderr?.on('data', (chunk: Buffer) => (logs += chunk));
  return { child, logs: () => logs, exited: once(child, 'exit').then(([code]) => code as number | null) };
}

export async function killHard(running: RunningCli): Promise<void> {
  running.child.kill('SIGKILL');
  await running.exited;
}

export async function waitFor(check: () => Promise<boolean>, ms: number, what: () => string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Records written to a topic, over all partitions (its end offsets). */
export async function recordsIn(kafka: Kafka, topic: string): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const offsets = await admin.fetchTopicOffsets(topic);
    return offsets.reduce((sum, p) => sum + Number(p.high), 0);
  } finally {
    await admin.disconnect();
  }
}

/** The sum of a counter's series on `run`'s /metrics (the operations port). */
export async function metricsCounter(port: number, name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(`partner_enrich_${name}`))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
}

/** Records whose position the group committed, over all partitions. */
export async function committedRecords(kafka: Kafka, topic: string, groupId: string): Promise<number> {
  const { committed } = await committedAndEndOffsets(kafka, groupId, topic);
  return Object.values(committed).reduce((sum, offset) => sum + Math.max(0, Number(offset)), 0);
}

export interface OutputCounts {
  matches: number;
  partnersMatched: number;
  /** Partners with more than one MatchResult (each input partner was produced once). */
  duplicateMatches: number;
  created: number;
  duplicateCreated: number;
  deadLetters: number;
}

/** The outputs of `count` new partners, each read once: one MatchResult and one Created each, nothing else. */
export const eachRecordOnce = (count: number): OutputCounts => ({
  matches: count,
  partnersMatched: count,
  duplicateMatches: 0,
  created: count,
  duplicateCreated: 0,
  deadLetters: 0,
});

/** What the output topics hold, per partner (read_committed, as kafkajs reads by default). */
export async function outputCounts(
  kafka: Kafka,
  registry: SchemaRegistry,
  topics: Config['topics'],
): Promise<OutputCounts> {
  const decode = async (topic: string) =>
    Promise.all(
      (await readAll(kafka, topic))
        .filter((m) => m.value !== null)
        .map(async (m) => (await registry.decode(m.value as Buffer)) as { partnerId: string; type?: string }),
    );
  const [matches, events, deadLetters] = await Promise.all([
    decode(topics.matches),
    decode(topics.events),
    readAll(kafka, topics.deadLetters),
  ]);
  const perPartner = (list: { partnerId: string }[]) => {
    const counts = new Map<string, number>();
    for (const { partnerId } of list) counts.set(partnerId, (counts.get(partnerId) ?? 0) + 1);
    return counts;
  };
  const matchCounts = perPartner(matches);
  const created = perPartner(events.filter((e) => e.type === 'BusinessPartnerCreated'));
  return {
    matches: matches.length,
    partnersMatched: matchCounts.size,
    duplicateMatches: [...matchCounts.values()].filter((n) => n > 1).length,
    created: created.size,
    duplicateCreated: [...created.values()].filter((n) => n > 1).length,
    deadLetters: deadLetters.length,
  };
}

/**
 * Fresh topics (removed by the returned cleanup) with `partners` produced to the input, each
 * keyed by its partner id, and a group id of its own.
 */
export async function topicsWithPartners(
  kafka: Kafka,
  registry: SchemaRegistry,
  prefix: string,
  partners: PartnerRecord[],
): Promise<{ topics: Config['topics']; groupId: string; cleanup: () => Promise<void> }> {
  const topics = testTopics(prefix);
  const dropTopics = await createTopicsFor(kafka, topics);
  const cleanup = async () => {
    await dropTopics();
    for (const t of [topics.input, topics.matches, topics.events, topics.storage])
      await deleteSubject(`${t}-value`);
  };
  await producePartners(kafka, registry, topics.input, partners);
  return { topics, groupId: uniqueName(`${prefix}-group`), cleanup };
}

/** Waits for every one of `count` positions to be committed, then reads the outputs. */
export async function outputsOnceDrained(
  kafka: Kafka,
  registry: SchemaRegistry,
  run: { topics: Config['topics']; groupId: string },
  count: number,
  logs: () => string,
): Promise<OutputCounts> {
  const { topics, groupId } = run;
  await waitFor(
    async () => (await committedRecords(kafka, topics.input, groupId)) >= count,
    150_000,
    () => `all ${count} positions committed:\n${logs().slice(-3000)}`,
  );
  const { committed, end } = await committedAndEndOffsets(kafka, groupId, topics.input);
  expect(committed).toEqual(end);
  return outputCounts(kafka, registry, topics);
}

/** `count` distinct, valid partner records of the sandbox's organizations of `seed`, each once. */
export const distinctPartners = (count: number, seed: number): PartnerRecord[] =>
  upstreamPartners(generateDataset({ organizations: count, seed }), {
    count,
    seed,
    invalid: 0,
    resent: 0,
    updated: 0,
  }).map((record) => record.partner as PartnerRecord);

/** What a file of `run` processes against one sandbox keeps: see sandboxWithPartners. */
export interface SandboxScene {
  sandbox: RunningSandbox;
  /** `count` distinct partner records of the sandbox's organizations (distinctPartners). */
  partners: PartnerRecord[];
  /** Processes started by the tests: SIGKILLed after the file if still running. */
  children: RunningCli[];
  /** Run after the file's tests (topics and subjects made for them). */
  cleanups: (() => Promise<void>)[];
}

/**
 * A sandbox of `count` organizations and their partner records, started before the file's
 * tests; after them, the processes they started are killed, their cleanups run and the
 * sandbox closed.
 */
export function sandboxWithPartners(count: number, seed: number): SandboxScene {
  const scene = { children: [], cleanups: [], partners: [] } as unknown as SandboxScene;
  beforeAll(async () => {
    scene.sandbox = await startSandbox({ port: 0, orgs: count, seed });
    scene.partners = distinctPartners(count, seed);
  }, 120_000);
  afterAll(async () => {
    for (const running of scene.children) if (running.child.exitCode === null) running.child.kill('SIGKILL');
    for (const cleanup of scene.cleanups) await cleanup();
    await scene.sandbox?.close();
  });
  return scene;
}
