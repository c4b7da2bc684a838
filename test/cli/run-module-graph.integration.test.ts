// `run` does not load the sandbox: main.ts registers every command at start, and the sandbox
// (fastify, the dataset generator, the response validator) is imported only by the commands
// that run it. A `run` process is followed from start to ready to exit with a hook that records
// every module it loads, including those imported later, after start.
import { once } from 'node:events';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/index.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { cliEnv, startCli } from '../support/cli.ts';
import { createTopicsFor, testTopics } from '../support/enrichment.ts';
import { kafkaClient, uniqueName } from '../support/kafka.ts';
import { deleteSubject } from '../support/schema-registry.ts';

const RECORDER = new URL('../support/module-load-recorder.ts', import.meta.url).pathname;
const SRC = new URL('../../src/', import.meta.url).href;

/** Runs the command until `until` says so from its output, stops it with SIGTERM; the repository modules it loaded. */
async function modulesLoadedBy(
  args: string[],
  env: NodeJS.ProcessEnv,
  until: (output: string) => Promise<boolean> | boolean,
): Promise<string[]> {
  const file = join(await mkdtemp(join(tmpdir(), 'modules-')), 'loaded.txt');
  const child = startCli(args, { ...env, NODE_OPTIONS: `--import ${RECORDER}`, MODULES_LOADED_FILE: file });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk));
  const exited = once(child, 'exit');
  try {
    const deadline = Date.now() + 90_000;
    while (!(await until(output))) {
      if (child.exitCode !== null) throw new Error(`${args[0]} exited with ${child.exitCode}:\n${output}`);
      if (Date.now() > deadline) throw new Error(`${args[0]} not there within 90 s:\n${output}`);
      await sleep(100);
    }
  } finally {
    child.kill('SIGTERM');
  }
  await exited;
  const urls = (await readFile(file, 'utf8')).split('\n');
  return urls.filter((url) => url.startsWith(SRC)).map((url) => `src/${url.slice(SRC.length)}`);
}

const sandboxModules = (modules: string[]) => modules.filter((module) => module.startsWith('src/sandbox/'));

describe('lazy loading of the sandbox', () => {
  const kafka = kafkaClient();
  let sandbox: RunningSandbox;
  let topics: Config['topics'];
  let dropTopics: () => Promise<void>;

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, orgs: 500, seed: 3 });
    topics = testTopics('module-graph');
    dropTopics = await createTopicsFor(kafka, topics);
  });
  afterAll(async () => {
    await dropTopics?.();
    for (const topic of [topics.matches, topics.events, topics.storage])
      await deleteSubject(`${topic}-value`);
    await sandbox?.close();
  });

  it('run, from start to ready to exit, loads no sandbox module but its flag defaults', async () => {
    const env = cliEnv(sandbox.url, topics, uniqueName('group'));
    const modules = await modulesLoadedBy(['run'], env, async (output) => {
      const url = /"metrics":"(http:[^"]+)\/metrics"/.exec(output)?.[1];
      return url !== undefined && (await fetch(`${url}/readyz`).catch(() => undefined))?.status === 200;
    });
    expect(modules).toContain('src/cli/commands/run.ts');
    expect(modules).toContain('src/kafka/kafka-source.ts');
    expect(sandboxModules(modules)).toEqual(['src/sandbox/defaults.ts']);
  });

  // The other side: the hook sees what a command imports when it runs, so the test above
  // would see the sandbox if `run` imported it, eagerly or late.
  it('sandbox loads the sandbox when it runs', async () => {
    const modules = await modulesLoadedBy(['sandbox', '--port', '0', '--orgs', '100'], {}, (output) =>
      output.includes('sandbox listening on'),
    );
    expect(sandboxModules(modules)).toContain('src/sandbox/server.ts');
  });
});
