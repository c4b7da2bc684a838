// `storage initialize` as an operator runs it: the real command in its own process against the
// sandbox over HTTP. The sandbox's jobs move on a clock the test owns, advanced when the command
// has printed the state before, so every state is seen without depending on timing.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startCli, type CliResult } from '../support/cli.ts';
import { CREDENTIALS, startTestSandbox, type TestSandbox } from '../sandbox/support/sandbox-fixtures.ts';

let sandbox: TestSandbox;
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  // storage-1 holds 100 partners: a job is CREATED for 1 s, then RUNNING 100 x 10 ms.
  sandbox = await startTestSandbox({
    jobMsPerPartner: 10,
    dataExchange: { username: CREDENTIALS.exchangeUser, password: CREDENTIALS.exchangePassword },
  });
  env = {
    PARTNER_ENRICH_REFDATA__BASE_URL: sandbox.url,
    PARTNER_ENRICH_REFDATA__API_KEY: CREDENTIALS.apiKey,
    PARTNER_ENRICH_REFDATA__CREDENTIAL_USERNAME: CREDENTIALS.exchangeUser,
    PARTNER_ENRICH_REFDATA__DATA_EXCHANGE_PASSWORD: CREDENTIALS.exchangePassword,
  };
});
afterAll(() => sandbox.close());

const STORAGE = 'storage-1';

/** The command's process, a way to wait for something it printed (either stream), and its end. */
function watched(child: ChildProcess): {
  shows: (pattern: RegExp) => Promise<void>;
  result: Promise<CliResult>;
} {
  let stdout = '';
  let stderr = '';
  const waiting: { pattern: RegExp; resolve: () => void }[] = [];
  const settle = (): void => {
    for (const wait of waiting.filter((w) => w.pattern.test(stdout + stderr))) {
      waiting.splice(waiting.indexOf(wait), 1);
      wait.resolve();
    }
  };
  child.stdout?.on('data', (chunk) => {
    stdout += chunk;
    settle();
  });
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
    settle();
  });
  const result = once(child, 'exit').then(([code]) => ({ code: code as number | null, stdout, stderr }));
  return {
    shows: (pattern) =>
      pattern.test(stdout + stderr)
        ? Promise.resolve()
        : Promise.race([
            new Promise<void>((resolve) => waiting.push({ pattern, resolve })),
            result.then((ended) => {
              throw new Error(`exited ${ended.code} before printing ${pattern}: ${ended.stderr}`);
            }),
          ]),
    result,
  };
}

const started = (args: string[]) => watched(startCli(['storage', 'initialize', ...args], env));

/** Runs the command while its job goes CREATED, RUNNING half-way and FINISHED; `progress`: what its log lines said. */
async function throughEveryState(args: string[]): Promise<CliResult & { progress: string[] }> {
  const command = started(args);
  await command.shows(/CREATED, 0 %/);
  sandbox.clock.advance(1_500);
  await command.shows(/RUNNING, 50 %/);
  sandbox.clock.advance(60_000);
  const result = await command.result;
  const progress = result.stderr
    .split('\n')
    .filter((line) => line.startsWith('event store initializer job'))
    .map((line) => line.replace(/^.*: (\w+, \d+ %).*$/, '$1'));
  return { ...result, progress };
}

const requestsOf = async (operation: string): Promise<number> =>
  (await sandbox.stats()).requestsByOperation[operation] ?? 0;

describe('partner-enrich storage initialize', { timeout: 60_000 }, () => {
  it('--help describes the options, their limits and the exit codes', async () => {
    const { code, stdout } = await runCli(['storage', 'initialize', '--help']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Usage: partner-enrich storage initialize/);
    const help = stdout.replace(/\s+/g, ' ');
    for (const text of [
      '--storage <id>',
      '1..500',
      'at most 10 unique tags',
      '--no-wait',
      '--job <jobId>',
      'follow the job with this id, started before',
      'exits 0',
      '3 when',
      '4 when it is still running after --timeout',
      // Regression: only the 8 missed polls were said to exit 2, not a configuration or service error, nor --timeout during them.
      '2 on a configuration or service error, among them REFDATA_JOB_UNREACHABLE',
      'in 8 polls in a row or until --timeout',
      '1 on a refused option',
    ])
      expect(help).toContain(text);
  });

  it('follows the job to FINISHED: a log line per change, the final job with its count, exit 0', async () => {
    const creates = await requestsOf('createEventStoreInitializerJob');
    const { code, stdout, stderr, progress } = await throughEveryState(['--storage', STORAGE]);

    expect(code, stderr).toBe(0);
    expect(progress).toEqual(['CREATED, 0 %', 'RUNNING, 50 %', 'FINISHED, 100 %']);
    expect(stdout).toMatch(/^status +FINISHED$/m);
    expect(stdout).toMatch(/^message +100 BusinessPartnerCreated events created$/m);
    expect(stdout).toMatch(/^event store +event-store-storage-1$/m);
    expect(await requestsOf('createEventStoreInitializerJob')).toBe(creates + 1);
  });

  it('on a terminal draws one progress bar redrawn in place instead of log lines', async () => {
    // script(1) gives the command a real pseudo-terminal; both streams arrive on its stdout.
    const command = watched(
      spawn(
        'script',
        [
          '-qfec',
          `node_modules/.bin/node src/cli/main.ts storage initialize --storage ${STORAGE}`,
          '/dev/null',
        ],
        { env: { PATH: process.env.PATH, ...env } },
      ),
    );
    await command.shows(/\| CREATED \|/);
    sandbox.clock.advance(1_500);
    await command.shows(/50% \| RUNNING \|/);
    sandbox.clock.advance(60_000);
    const { code, stdout } = await command.result;

    expect(code, stdout).toBe(0);
    expect(stdout).toMatch(/initializing storage-1 \[[^\]]+\] 100% \| FINISHED/);
    expect(stdout).not.toMatch(/event store initializer job \S+: \w+, \d+ %/);
    expect(stdout).toMatch(/^status +FINISHED\r?$/m);
  });

  it('sends every option to the service and prints the final job as JSON with --json', async () => {
    const partners = sandbox.state.storages.get(STORAGE)?.partners ?? [];
    const startAfter = partners[9]?.businessPartnerId ?? '';
    const command = started([
      '--storage',
      STORAGE,
      '--data-source',
      'erp',
      '--start-after',
      startAfter,
      '--batch-size',
      '200',
      '--limit',
      '30',
      '--tag',
      'nightly',
      '--tag',
      'refresh',
      '--initialize',
      '--dry-run',
      '--json',
    ]);
    await command.shows(/CREATED, 0 %/);
    sandbox.clock.advance(60_000);
    const { code, stdout, stderr } = await command.result;

    expect(code, stderr).toBe(0);
    const job = JSON.parse(stdout) as Record<string, unknown>;
    expect(job).toMatchObject({
      status: 'FINISHED',
      storageId: STORAGE,
      dataSourceId: 'erp',
      startAfter,
      batchSize: 200,
      message: '30 BusinessPartnerCreated events created',
    });
    // NO_PERSISTENCE: the job writes to no event store.
    expect(job.eventStoreId).toBeUndefined();
    expect(sandbox.state.eventStoreJobs.get(job.id as string)?.request).toMatchObject({
      limit: 30,
      tags: ['nightly', 'refresh'],
      featuresOn: ['INITIALIZE', 'NO_PERSISTENCE'],
    });
  });

  it('exits 3 with the job and its message when the job DIES', async () => {
    await sandbox.raw('PUT', '/admin/faults', { body: { jobDeathRate: 1 } });
    try {
      const command = started(['--storage', STORAGE]);
      await command.shows(/CREATED, 0 %/);
      sandbox.clock.advance(60_000);
      const { code, stdout, stderr } = await command.result;

      expect(code, stderr).toBe(3);
      expect(stdout).toMatch(/^status +DIED$/m);
      expect(stdout).toMatch(/^progress +50 %$/m);
      expect(stderr).toMatch(
        /partner-enrich: REFDATA_JOB_FAILED: eventStoreInitializerJob \S+ ended with status DIED: the job died unexpectedly/,
      );
    } finally {
      await sandbox.raw('PUT', '/admin/faults', { body: { jobDeathRate: 0 } });
    }
  });

  it('exits 3 with the reason when the job COULDNT_START (a storage that does not exist)', async () => {
    const { code, stdout, stderr } = await runCli(['storage', 'initialize', '--storage', 'nope'], env);
    expect(code, stderr).toBe(3);
    expect(stdout).toMatch(/^status +COULDNT_START$/m);
    expect(stderr).toContain('ended with status COULDNT_START: storage nope does not exist');
  });

  it('exits 4 when the job is still running after --timeout, saying it keeps running', async () => {
    const command = started(['--storage', STORAGE, '--timeout', '1']);
    const { code, stdout, stderr } = await command.result;
    expect(code, stderr).toBe(4);
    expect(stdout).toMatch(/^status +CREATED$/m);
    expect(stderr).toMatch(/REFDATA_JOB_TIMEOUT: .* did not finish in time \(last status CREATED\)/);
    expect(stderr).toMatch(/job \S+ keeps running on the service/);
  });

  describe('a job started before, followed again by its id (--job)', () => {
    /** Starts a job with --no-wait and returns its id and what the command printed on stderr. */
    const startedWithoutWaiting = async (storage = STORAGE): Promise<{ id: string; stderr: string }> => {
      const { code, stdout, stderr } = await runCli(
        ['storage', 'initialize', '--storage', storage, '--no-wait'],
        env,
      );
      expect(code, stderr).toBe(0);
      return { id: stdout.trim(), stderr };
    };

    it('regression: a job started with --no-wait can be followed again by its id, as a started job is', async () => {
      const { id, stderr: hint } = await startedWithoutWaiting();
      // Before, nothing took a job id: --no-wait printed it and the job could only be asked after elsewhere.
      expect(hint).toContain(`partner-enrich storage initialize --job ${id}`);
      const creates = await requestsOf('createEventStoreInitializerJob');

      const { code, stdout, stderr, progress } = await throughEveryState(['--job', id]);

      expect(code, stderr).toBe(0);
      expect(stderr).toContain(`following event store initializer job ${id}\n`);
      expect(progress).toEqual(['CREATED, 0 %', 'RUNNING, 50 %', 'FINISHED, 100 %']);
      expect(stdout).toMatch(new RegExp(`^job +${id}$`, 'm'));
      expect(stdout).toMatch(/^status +FINISHED$/m);
      expect(stdout).toMatch(/^message +100 BusinessPartnerCreated events created$/m);
      expect(stdout).toMatch(/^storage +storage-1$/m);
      expect(await requestsOf('createEventStoreInitializerJob')).toBe(creates);
    });

    it('regression: a job still running after --timeout (exit 4) can be followed again by its id', async () => {
      const first = await started(['--storage', STORAGE, '--timeout', '1']).result;
      expect(first.code, first.stderr).toBe(4);
      const id = (
        /started event store initializer job (\S+)/.exec(first.stderr) as RegExpExecArray
      )[1] as string;
      expect(first.stderr).toContain(
        `partner-enrich: job ${id} keeps running on the service; follow it again with: partner-enrich storage initialize --job ${id}`,
      );

      const command = started(['--job', id, '--json']);
      await command.shows(/CREATED, 0 %/);
      sandbox.clock.advance(60_000);
      const { code, stdout, stderr } = await command.result;

      expect(code, stderr).toBe(0);
      expect(JSON.parse(stdout)).toMatchObject({
        id,
        status: 'FINISHED',
        storageId: STORAGE,
        message: '100 BusinessPartnerCreated events created',
      });
    });

    it('exits 3 with the reason when the job followed by its id COULDNT_START', async () => {
      const { id } = await startedWithoutWaiting('nope');
      const { code, stdout, stderr } = await runCli(['storage', 'initialize', '--job', id], env);
      expect(code, stderr).toBe(3);
      expect(stdout).toMatch(/^status +COULDNT_START$/m);
      expect(stderr).toContain(`${id} ended with status COULDNT_START: storage nope does not exist`);
    });

    it('with --no-wait prints the job once as read: a status check, exit 0 whatever its status', async () => {
      const { id } = await startedWithoutWaiting();
      const reads = await requestsOf('getEventStoreInitializerJob');

      const table = await runCli(['storage', 'initialize', '--job', id, '--no-wait'], env);
      expect(table.code, table.stderr).toBe(0);
      expect(table.stdout).toMatch(new RegExp(`^job +${id}$`, 'm'));
      expect(table.stdout).toMatch(/^status +CREATED$/m);
      expect(table.stderr).not.toMatch(/event store initializer job \S+: CREATED/);

      const json = await runCli(['storage', 'initialize', '--job', id, '--no-wait', '--json'], env);
      expect(json.code, json.stderr).toBe(0);
      expect(JSON.parse(json.stdout)).toMatchObject({ id, status: 'CREATED', storageId: STORAGE });
      expect(await requestsOf('getEventStoreInitializerJob')).toBe(reads + 2);
    });

    it('a job id the service does not know: REFDATA_NOT_FOUND naming the job, exit 2', async () => {
      const { code, stdout, stderr } = await runCli(['storage', 'initialize', '--job', 'no-such-job'], env);
      expect(code, stderr).toBe(2);
      expect(stdout).toBe('');
      expect(stderr).toContain(
        'partner-enrich: REFDATA_NOT_FOUND: getEventStoreInitializerJob failed with HTTP 404',
      );
      expect(stderr).toContain(
        'partner-enrich: the service knows no event store initializer job no-such-job',
      );
    });

    it.each([
      [['--storage', STORAGE], "'--storage <id>'"],
      [['--data-source', 'erp'], "'--data-source <id>'"],
      [['--start-after', 'bp-1'], "'--start-after <partnerId>'"],
      [['--batch-size', '10'], "'--batch-size <n>'"],
      [['--limit', '10'], "'--limit <n>'"],
      [['--tag', 'nightly'], "'--tag <tag>'"],
      [['--initialize'], "'--initialize'"],
      [['--dry-run'], "'--dry-run'"],
    ])('refuses %j, an option of a new job, together with --job before any request', async (args, option) => {
      const reads = await requestsOf('getEventStoreInitializerJob');
      const creates = await requestsOf('createEventStoreInitializerJob');
      const { code, stderr } = await runCli(['storage', 'initialize', '--job', 'some-job', ...args], env);
      expect(code).toBe(1);
      expect(stderr).toContain(`error: option '--job <jobId>' cannot be used with option ${option}`);
      expect(await requestsOf('getEventStoreInitializerJob')).toBe(reads);
      expect(await requestsOf('createEventStoreInitializerJob')).toBe(creates);
    });
  });

  describe('while the service resets every connection', () => {
    const resets = async (): Promise<number> => Number((await sandbox.stats())['injectedResets'] ?? 0);
    const setResetRate = (resetRate: number) => sandbox.raw('PUT', '/admin/faults', { body: { resetRate } });
    afterEach(() => setResetRate(0));

    it('regression: one network error while following ended the command (exit 2, the job left behind)', async () => {
      const command = started(['--storage', STORAGE]);
      let ended = false;
      void command.result.then(() => (ended = true));
      await command.shows(/CREATED, 0 %/);
      // More resets than the client's own attempts at one read (retry.maxAttempts, 5): before,
      // the first read that used them all up ended the command.
      const before = await resets();
      await setResetRate(1);
      while (!ended && (await resets()) < before + 8) await new Promise((resolve) => setTimeout(resolve, 50));
      await setResetRate(0);
      sandbox.clock.advance(60_000);
      const { code, stdout, stderr } = await command.result;

      expect(code, stderr).toBe(0);
      expect(stdout).toMatch(/^status +FINISHED$/m);
      expect(stderr).not.toContain('REFDATA_NETWORK_ERROR');
    });

    it('gives up at --timeout with REFDATA_JOB_UNREACHABLE naming the job (exit 2); regression: the job can be followed again by its id once the service answers', async () => {
      const command = started(['--storage', STORAGE, '--timeout', '3']);
      await command.shows(/CREATED, 0 %/);
      await setResetRate(1);
      const { code, stdout, stderr } = await command.result;

      const id = (/started event store initializer job (\S+)/.exec(stderr) as RegExpExecArray)[1] as string;
      expect(code, stderr).toBe(2);
      expect(stdout).toMatch(/^status +CREATED$/m);
      expect(stderr).toContain(
        `partner-enrich: REFDATA_JOB_UNREACHABLE: eventStoreInitializerJob ${id} could not be read ` +
          '(last status CREATED): getEventStoreInitializerJob: network error (ECONNRESET)',
      );
      expect(stderr).toContain(
        `partner-enrich: job ${id} may still be running on the service; once it answers, follow it again with: ` +
          `partner-enrich storage initialize --job ${id}`,
      );

      await setResetRate(0);
      sandbox.clock.advance(60_000);
      const again = await runCli(['storage', 'initialize', '--job', id], env);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toMatch(/^status +FINISHED$/m);
    });
  });

  it('--no-wait prints only the job id and never reads the job', async () => {
    const reads = await requestsOf('getEventStoreInitializerJob');
    const { code, stdout, stderr } = await runCli(
      ['storage', 'initialize', '--storage', STORAGE, '--no-wait'],
      env,
    );
    expect(code, stderr).toBe(0);
    const id = stdout.trim();
    expect(stdout).toBe(`${id}\n`);
    expect(sandbox.state.eventStoreJobs.get(id)?.request.storageId).toBe(STORAGE);
    expect(await requestsOf('getEventStoreInitializerJob')).toBe(reads);
  });

  const elevenTags = Array.from({ length: 11 }, (_, i) => ['--tag', `t${i}`]).flat();
  it.each([
    [
      ['--batch-size', '0'],
      "option '--batch-size <n>' argument '0' is invalid. --batch-size must be a whole number in decimal digits from 1 to 500",
    ],
    [['--batch-size', '501'], '--batch-size must be a whole number in decimal digits from 1 to 500'],
    [['--batch-size', '2.5'], '--batch-size must be a whole number in decimal digits from 1 to 500'],
    [
      ['--limit', '0'],
      "option '--limit <n>' argument '0' is invalid. --limit must be a whole number in decimal digits, 1 or more",
    ],
    [elevenTags, "option '--tag <tag>' argument 't10' is invalid. one tag too many; at most 10 unique tags"],
    [['--tag', 'a', '--tag', 'a'], 'a is given twice; tags must be unique (at most 10)'],
    [['--tag', ''], "option '--tag <tag>' argument '' is invalid. must not be empty"],
    [['--timeout', '0'], '--timeout must be a whole number in decimal digits, 1 or more'],
  ])('refuses %j before any request, naming the option and the limit', async (args, message) => {
    const creates = await requestsOf('createEventStoreInitializerJob');
    const { code, stderr } = await runCli(['storage', 'initialize', '--storage', STORAGE, ...args], env);
    expect(code).toBe(1);
    expect(stderr).toContain(message);
    expect(await requestsOf('createEventStoreInitializerJob')).toBe(creates);
  });

  it("regression: the lookup API's API key was required though never sent (CONFIG_INVALID refdata.apiKey, exit 2); the data exchange password alone starts the job", async () => {
    const { code, stdout, stderr } = await runCli(
      ['storage', 'initialize', '--storage', STORAGE, '--no-wait'],
      {
        ...env,
        PARTNER_ENRICH_REFDATA__API_KEY: undefined,
      },
    );
    expect(code, stderr).toBe(0);
    expect(sandbox.state.eventStoreJobs.get(stdout.trim())?.request.storageId).toBe(STORAGE);
  });

  it('refuses to run without --storage', async () => {
    const { code, stderr } = await runCli(['storage', 'initialize'], env);
    expect(code).toBe(1);
    expect(stderr).toContain(
      "error: required option '--storage <id>' not specified (or --job <jobId>: follow a job started before)",
    );
  });

  it('refuses to start without the data exchange password, naming the option and its variable', async () => {
    const creates = await requestsOf('createEventStoreInitializerJob');
    const { code, stderr } = await runCli(['storage', 'initialize', '--storage', STORAGE], {
      ...env,
      PARTNER_ENRICH_REFDATA__DATA_EXCHANGE_PASSWORD: undefined,
    });
    expect(code).toBe(2);
    expect(stderr).toContain('CONFIG_INVALID');
    expect(stderr).toContain('refdata.dataExchangePassword: required by storage initialize');
    expect(stderr).toContain('PARTNER_ENRICH_REFDATA__DATA_EXCHANGE_PASSWORD');
    expect(await requestsOf('createEventStoreInitializerJob')).toBe(creates);
  });
});
