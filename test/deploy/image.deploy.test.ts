// The container image, built from the repository's Dockerfile with podman on this machine's
// local base (deploy/container), and run as an operator runs it: --help, config check with a
// mounted file, the sandbox answering through a published port, `topics create` and `run`
// against a real broker and registry until ready and healthy, and `demo` end to end.
// Prints the image size and the containers' startup times (docs/CONTAINER.md).
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildImage, packageVersion, type BuiltImage } from '../../deploy/container/build-image.ts';
import { podman, podmanResult } from '../../deploy/container/podman.ts';
import {
  defaultInfrastructureOptions,
  startInfrastructure,
  type Infrastructure,
} from '../../deploy/local/infra.ts';
import { freePort } from '../../deploy/local/processes.ts';
import { RefDataClient } from '../../src/refdata/index.ts';
import { buildSandboxApp, startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { knownPartner, normalizedQuery } from '../sandbox/support/partners.ts';
import { jsonPartnerMessages, produce } from '../support/enrichment.ts';
import { kafkaClient, setTopicConfig } from '../support/kafka.ts';
import { metricsCounter } from '../support/run-process.ts';
import { allContainers, interruptBuild } from './support/interrupted-build.ts';
import { slowdown } from './support/machine-speed.ts';

const exec = promisify(execFile);
const IMAGE = 'localhost/partner-enrich:deploy-test';
const API_KEY = 'sandbox-api-key';

interface Lock {
  packages: Record<string, { dev?: boolean; os?: string[]; cpu?: string[]; libc?: string[] }>;
}

/**
 * Whether npm installs a lockfile package on the image's platform: the native codecs' prebuilt
 * binaries are optional packages for one os, cpu and libc each (the image is Debian's glibc
 * on this machine's architecture).
 */
const forImage = ({ os, cpu, libc }: Lock['packages'][string]): boolean =>
  (os?.includes('linux') ?? true) &&
  (cpu?.includes(process.arch) ?? true) &&
  (libc?.includes('glibc') ?? true);

/** Seconds since `started`, one decimal. */
const since = (started: number): string => ((Date.now() - started) / 1000).toFixed(1);

async function until(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(50);
  }
}

async function status(url: string): Promise<number | undefined> {
  return (await fetch(url).catch(() => undefined))?.status;
}

/** The host's pid of a container's main process. */
async function hostPid(container: string): Promise<string> {
  return (await podman(['inspect', '--format', '{{.State.Pid}}', container])).trim();
}

/** CPU seconds and seconds of life of a process, from the host's /proc. */
async function processClock(pid: string): Promise<{ cpu: number; age: number }> {
  const ticks = Number((await exec('getconf', ['CLK_TCK'])).stdout);
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which is in parentheses: field 3 (state) is at index 0.
  const fields = stat
    .slice(stat.lastIndexOf(')') + 2)
    .split(' ')
    .map(Number);
  const [utime, stime, startTime] = [fields[11], fields[12], fields[19]] as [number, number, number];
  const uptime = Number((await readFile('/proc/uptime', 'utf8')).split(' ')[0]);
  return { cpu: (utime + stime) / ticks, age: uptime - startTime / ticks };
}

describe('the container image', () => {
  const report: string[] = [];
  const containers: string[] = [];
  const cleanups: (() => Promise<unknown>)[] = [];
  let built: BuiltImage;
  let infrastructure: Infrastructure;

  const note = (line: string) => {
    report.push(line);
    console.log(`[image] ${line}`);
  };
  /** Runs the image to its end: `podman run --rm <flags> IMAGE <args>`. */
  const runImage = (flags: string[], args: string[]) =>
    podmanResult(['run', '--rm', '--no-healthcheck', ...flags, IMAGE, ...args]);
  /** Starts the image in the background; removed after the tests. */
  const startImage = async (flags: string[], args: string[]): Promise<string> => {
    const id = (await podman(['run', '--detach', ...flags, IMAGE, ...args])).trim();
    containers.push(id);
    return id;
  };

  beforeAll(async () => {
    const started = Date.now();
    // The broker and the registry start (JVMs) while the image builds.
    const options = defaultInfrastructureOptions();
    const starting = startInfrastructure({ ...options, kafkaVersions: options.kafkaVersions.slice(0, 1) });
    starting.catch(() => {});
    built = await buildImage(IMAGE);
    note(`local base ${built.baseImage}: ${built.baseSeconds.toFixed(1)} s`);
    note(`podman build: ${built.buildSeconds.toFixed(1)} s`);
    note(`image size: ${(built.bytes / 1e6).toFixed(0)} MB (uncompressed)`);
    infrastructure = await starting;
    note(`image and infrastructure ready after ${since(started)} s`);
  });
  afterAll(async () => {
    if (containers.length > 0) await podmanResult(['rm', '--force', '--time', '0', ...containers]);
    for (const cleanup of cleanups) await cleanup();
    await infrastructure?.stop();
    console.log(['', 'container image summary:', ...report.map((line) => `  ${line}`)].join('\n'));
  });

  // First, while no other test's container uses the image. CI failed in buildImage: its global
  // `podman image prune` removed an untagged image built on one an interrupted build's working
  // container used, then that one with it, and podman refused (exit 125, "image is in use by a
  // container"). Here that image is the previous image of the tag: a finished build on it leaves
  // an untagged child, a killed one its working container.
  it('a build succeeds when an interrupted earlier build left a container on the previous image', async () => {
    const imageId = async () => (await podman(['image', 'inspect', '--format', '{{.Id}}', IMAGE])).trim();
    const previous = await imageId();
    const dir = await mkdtemp(join(tmpdir(), 'image-child-'));
    await writeFile(join(dir, 'Containerfile'), `FROM ${previous}\nRUN true\n`);
    const child = (await podman(['build', '--quiet', '--file', join(dir, 'Containerfile'), dir])).trim();
    await rm(dir, { recursive: true, force: true });
    const interrupted = await interruptBuild(previous);
    const logged = vi.spyOn(console, 'error');
    try {
      expect(interrupted.containers.map((container) => container.ImageID)).toEqual([previous]);
      const external = await podman(['ps', '--external', '--all', '--format', '{{.ID}} {{.Status}}']);
      expect(external).toContain(`${interrupted.containers[0]?.Id.slice(0, 12)} Storage`);

      const started = Date.now();
      await buildImage(IMAGE);
      note(
        `podman build again, cached, an interrupted build's container on the previous image: ${since(started)} s`,
      );
      expect(await imageId()).not.toBe(previous);
      // Left in place, with a warning: a container uses it.
      expect((await podmanResult(['image', 'exists', previous])).code).toBe(0);
      const warnings = logged.mock.calls.flat().join('\n');
      expect(warnings).toContain(`the previous ${IMAGE} (${previous.slice(0, 12)}) is left in place`);
      expect(warnings).toContain('image is in use by a container');
    } finally {
      logged.mockRestore();
      await interrupted.stop();
      // The child, then the previous image with it: untagged, it has no other child, no container.
      await podmanResult(['rmi', child]);
      if ((await imageId()) !== previous) await podmanResult(['rmi', previous]);
    }
    expect((await allContainers()).filter((container) => container.ImageID === previous)).toEqual([]);
    expect((await podmanResult(['image', 'exists', previous])).code).toBe(1);
  });

  it('runs the CLI as uid 1000 on the base image Node, with production dependencies only, a HEALTHCHECK and OCI labels', async () => {
    const inspected = JSON.parse(await podman(['image', 'inspect', IMAGE])) as {
      Config: { User: string; Entrypoint: string[]; Cmd: string[]; Labels: Record<string, string> };
      Healthcheck?: { Test: string[] };
    }[];
    const image = inspected[0];
    expect(image?.Config.User).toBe('1000:1000');
    expect(image?.Config.Entrypoint).toEqual(['/app/dist/bin/partner-enrich.js']);
    expect(image?.Config.Cmd).toEqual(['run']);
    expect(image?.Healthcheck?.Test.join(' ')).toContain('/healthz');
    // A plain `docker build` gets the Dockerfile's default version: the package's.
    expect(/^ARG VERSION=(.+)$/m.exec(await readFile('Dockerfile', 'utf8'))?.[1]).toBe(packageVersion());
    const revision = (await exec('git', ['rev-parse', 'HEAD'])).stdout.trim();
    expect(image?.Config.Labels).toMatchObject({
      'org.opencontainers.image.title': 'partner-enrich',
      'org.opencontainers.image.version': packageVersion(),
      'org.opencontainers.image.revision': revision,
      'org.opencontainers.image.licenses': 'Apache-2.0',
      'org.opencontainers.image.base.name': built.baseImage,
    });

    const listing = await runImage(
      ['--entrypoint', 'node'],
      [
        '-e',
        "const fs = require('node:fs'); console.log(JSON.stringify({ version: process.version, modules: " +
          "fs.readdirSync('node_modules').flatMap((n) => n.startsWith('@') ? fs.readdirSync('node_modules/' + n).map((m) => n + '/' + m) : [n]) }))",
      ],
    );
    expect(listing.code, listing.stderr).toBe(0);
    const { version, modules } = JSON.parse(listing.stdout) as { version: string; modules: string[] };
    expect(version).toMatch(/^v24\./);
    const lock = JSON.parse(await readFile('package-lock.json', 'utf8')) as Lock;
    const production = Object.entries(lock.packages)
      .filter(
        ([path, entry]) => /^node_modules\/(@[^/]+\/)?[^/]+$/.test(path) && !entry.dev && forImage(entry),
      )
      .map(([path]) => path.slice('node_modules/'.length));
    expect(modules.filter((name) => !name.startsWith('.')).sort()).toEqual(production.sort());
    expect(modules).not.toContain('node');
  });

  it('--help', async () => {
    const started = Date.now();
    const { code, stdout, stderr } = await runImage([], ['--help']);
    note(`podman run IMAGE --help, start to exit: ${since(started)} s`);
    expect(code, stderr).toBe(0);
    for (const command of ['run', 'demo', 'dlq', 'topics', 'config', 'rerun', 'sandbox'])
      expect(stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
  });

  it("regression: `partner-enrich` was not on the image's PATH, so OPERATIONS' `kubectl exec ... -- partner-enrich <command>` failed", async () => {
    const { code, stdout, stderr } = await runImage(['--entrypoint', 'partner-enrich'], ['topics', '--help']);
    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(/^Usage: partner-enrich topics/m);
  });

  it('config check reads a mounted file and the environment, redacts the secret, refuses an invalid value', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'image-config-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, 'partner-enrich.yaml');
    await writeFile(
      file,
      'kafka:\n  brokers: [broker-1.example:9092, broker-2.example:9092]\n' +
        'topics:\n  input: image-check-input\nrefdata:\n  baseUrl: https://refdata.example\n  auth: apiKey\n',
    );
    await chmod(dir, 0o755);
    const secret = 'image-check-secret-value';
    const flags = [
      ...['--volume', `${file}:/config/partner-enrich.yaml:ro`],
      ...['--env', 'PARTNER_ENRICH_CONFIG=/config/partner-enrich.yaml'],
      ...['--env', `PARTNER_ENRICH_REFDATA__API_KEY=${secret}`],
    ];
    const checked = await runImage(flags, ['config', 'check']);
    expect(checked.code, checked.stderr).toBe(0);
    const config = JSON.parse(checked.stdout) as {
      kafka: { brokers: string[] };
      topics: { input: string };
      refdata: { baseUrl: string; apiKey: string };
      observability: { metricsHost: string };
    };
    expect(config.kafka.brokers).toEqual(['broker-1.example:9092', 'broker-2.example:9092']);
    expect(config.topics.input).toBe('image-check-input');
    expect(config.refdata).toMatchObject({ baseUrl: 'https://refdata.example', apiKey: '[redacted]' });
    // The image's own setting: the endpoints listen on every interface of the container.
    expect(config.observability.metricsHost).toBe('0.0.0.0');
    expect(checked.stdout + checked.stderr).not.toContain(secret);

    const refused = await runImage(
      [...flags, '--env', 'PARTNER_ENRICH_BATCHING__MAX_TASKS=0'],
      ['config', 'check'],
    );
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('CONFIG_INVALID');
    expect(refused.stderr).toContain('batching.maxTasks');
  });

  it('sandbox answers lookups through a published port; its HEALTHCHECK fails, as it serves no /healthz', async () => {
    const port = await freePort();
    const started = Date.now();
    const container = await startImage(
      ['--publish', `127.0.0.1:${port}:8080`],
      ['sandbox', '--host', '0.0.0.0', '--orgs', '1000', '--seed', '4'],
    );
    const url = `http://127.0.0.1:${port}`;
    await until(
      'the sandbox in the container',
      60_000,
      async () => (await status(`${url}/admin/stats`)) === 200,
    );
    note(`podman run IMAGE sandbox, start to answering over HTTP: ${since(started)} s`);

    // The same dataset, generated here: the container must find its organization.
    const { state } = buildSandboxApp({ orgs: 1000, seed: 4 });
    const partner = knownPartner(state, 0);
    const client = new RefDataClient({ roots: { base: url }, credentials: { apiKey: API_KEY } });
    const page = await client.lookupBusinessPartnersV4({
      body: { businessPartner: normalizedQuery(partner) },
    });
    expect(page.values?.[0]?.svcId).toBe(partner.svcId);

    const health = await podmanResult(['healthcheck', 'run', container]);
    expect(health.code, health.stdout + health.stderr).not.toBe(0);
  });

  it('topics create, then run: ready and healthy against a real broker, startup measured, reads input the broker keeps LZ4- and Snappy-compressed (native codecs in the image), SIGTERM ends it with 0', async () => {
    const sandbox: RunningSandbox = await startSandbox({ port: 0, orgs: 500, seed: 2, apiKey: API_KEY });
    cleanups.push(() => sandbox.close());
    const metricsPort = await freePort();
    const prefix = `image-${Date.now()}`;
    const env = {
      KAFKA_BROKERS: infrastructure.brokers[0]?.bootstrap ?? '',
      SCHEMA_REGISTRY_URL: infrastructure.schemaRegistryUrl,
      PARTNER_ENRICH_KAFKA__GROUP_ID: `${prefix}-group`,
      PARTNER_ENRICH_TOPICS__INPUT: `${prefix}.partners`,
      PARTNER_ENRICH_TOPICS__MATCHES: `${prefix}.matches`,
      PARTNER_ENRICH_TOPICS__EVENTS: `${prefix}.events`,
      PARTNER_ENRICH_TOPICS__STORAGE: `${prefix}.storage`,
      PARTNER_ENRICH_TOPICS__DEAD_LETTERS: `${prefix}.dlq`,
      PARTNER_ENRICH_TOPICS__STATE: `${prefix}.state`,
      PARTNER_ENRICH_TOPICS__PARTITIONS: '2',
      PARTNER_ENRICH_INPUT_FORMAT: 'json',
      PARTNER_ENRICH_REFDATA__BASE_URL: sandbox.url,
      PARTNER_ENRICH_REFDATA__API_KEY: API_KEY,
      PARTNER_ENRICH_OBSERVABILITY__METRICS_PORT: String(metricsPort),
    };
    // The broker listens on the host's loopback: the containers share the host's network.
    const flags = [
      '--network',
      'host',
      ...Object.entries(env).flatMap(([name, value]) => ['--env', `${name}=${value}`]),
    ];

    const created = await runImage(flags, ['topics', 'create']);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toContain(`created: ${prefix}.partners`);

    const started = Date.now();
    const container = await startImage(flags, ['run']);
    // Found before it is ready: read at the moment it is, its CPU time is its start-up alone.
    const pid = await hostPid(container);
    const base = `http://127.0.0.1:${metricsPort}`;
    await until('run ready in the container', 120_000, async () => (await status(`${base}/readyz`)) === 200);
    const own = await processClock(pid);
    const wall = since(started);
    note(
      `podman run IMAGE run, start to /readyz 200: ${wall} s; its process: ${own.age.toFixed(1)} s, ` +
        `${own.cpu.toFixed(2)} s of CPU (its own work; the rest is waiting on the broker and the registry)`,
    );
    // Issue 15's bound: `run` starts in under a second of its own work. CPU time, not wall time:
    // the wall clock here is mostly the broker's and the registry's answers, and other load. A
    // second of the reference day's machine: on a day this VM runs JavaScript slower, as many
    // seconds as it is slower (machine-speed.ts), measured in the same run.
    const slower = await slowdown();
    note(`this machine against the reference day: ${slower.toFixed(2)} times as slow (1: as fast or faster)`);
    expect(own.cpu, 'CPU seconds of run from exec to ready').toBeLessThan(1 * slower);
    const metrics = await fetch(`${base}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toMatch(/^# HELP /m);
    const health = await podmanResult(['healthcheck', 'run', container]);
    expect(health.code, health.stdout + health.stderr).toBe(0);

    // The codecs kafkajs lacks are native modules the bundle requires from the image's
    // node_modules when a compressed batch first comes (docs/ARCHITECTURE.md).
    const kafka = kafkaClient(env.KAFKA_BROKERS);
    const partners = jsonPartnerMessages(10, 2, 500);
    for (const [round, codec] of ['lz4', 'snappy'].entries()) {
      await setTopicConfig(kafka, env.PARTNER_ENRICH_TOPICS__INPUT, 'compression.type', codec);
      const batch = partners.slice(round * 5, round * 5 + 5);
      await produce(kafka, env.PARTNER_ENRICH_TOPICS__INPUT, batch);
      await until(
        `${codec} records enriched`,
        60_000,
        async () => (await metricsCounter(metricsPort, 'records_out_total')) === round * 5 + 5,
      );
    }
    expect(await status(`${base}/healthz`)).toBe(200);

    await podman(['stop', '--time', '60', container]);
    const exitCode = (await podman(['inspect', '--format', '{{.State.ExitCode}}', container])).trim();
    const logs = await podmanResult(['logs', container]);
    expect(exitCode, logs.stdout + logs.stderr).toBe('0');
    expect(logs.stdout + logs.stderr).toContain('"signal":"SIGTERM"');
  });

  it('demo enriches examples/partners.ndjson end to end with the sandbox in-process', async () => {
    const out = await mkdtemp(join(tmpdir(), 'image-demo-'));
    cleanups.push(() => rm(out, { recursive: true, force: true }));
    await chmod(out, 0o777);
    const started = Date.now();
    const { code, stdout, stderr } = await runImage(
      ['--volume', `${out}:/out`],
      ['demo', '--no-progress', '--output-dir', '/out'],
    );
    note(`podman run IMAGE demo (3,000 records), start to exit: ${since(started)} s`);
    expect(code, stderr).toBe(0);
    const input = (await readFile('examples/partners.ndjson', 'utf8'))
      .split('\n')
      .filter((line) => line.trim());
    expect(stdout).toMatch(new RegExp(`│ records read\\s+│\\s+${input.length} │`));
    const lines = async (name: string) =>
      (await readFile(join(out, name), 'utf8')).split('\n').filter((line) => line.trim());
    const matches = await lines('matches.ndjson');
    const deadLetters = await lines('dead-letters.ndjson');
    expect(matches.length + deadLetters.length).toBe(input.length);
    expect(
      matches.filter((line) => (JSON.parse(line) as { outcome: string }).outcome === 'MATCH').length,
    ).toBeGreaterThan(input.length / 2);
  });
});
