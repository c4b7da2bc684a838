// The command line without Kafka: help texts, configuration check, and the embedded
// default (`demo`, what `npm start` runs) on a small input.
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, open, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SANDBOX_DEFAULTS, startSandbox } from '../../src/sandbox/index.ts';
import { runCli, startCli } from '../support/cli.ts';

// Each test starts a Node process that loads the whole CLI; on a busy 2-core machine that takes seconds.
describe('partner-enrich', { timeout: 60_000 }, () => {
  it.each(['run', 'demo', 'dlq replay', 'topics create', 'config check', 'sandbox'])(
    '%s --help describes the command',
    async (command) => {
      const { code, stdout } = await runCli([...command.split(' '), '--help']);
      expect(code).toBe(0);
      expect(stdout).toMatch(new RegExp(`^Usage: partner-enrich ${command}`));
      expect(stdout.length).toBeGreaterThan(100);
    },
  );

  it('config check prints the validated configuration with secrets redacted', async () => {
    const { code, stdout } = await runCli(['config', 'check'], {
      PARTNER_ENRICH_REFDATA__API_KEY: 'very-secret-key-123',
      PARTNER_ENRICH_KAFKA__BROKERS: 'broker-a:9092,broker-b:9092',
    });
    expect(code).toBe(0);
    expect(stdout).toContain('broker-b:9092');
    expect(stdout).toContain('[redacted]');
    expect(stdout).not.toContain('very-secret-key-123');
  });

  it('config check --origins names the source whose value is in force for each option set, never a value', async () => {
    const file = join(await mkdtemp(join(tmpdir(), 'origins-')), 'partner-enrich.yaml');
    await writeFile(file, ['batching:', '  maxTasks: 200', '  lingerMs: 50', ''].join('\n'));
    const { code, stdout } = await runCli(['config', 'check', '--config', file, '--origins'], {
      PARTNER_ENRICH_REFDATA__API_KEY: 'very-secret-key-456',
      PARTNER_ENRICH_BATCHING__MAX_TASKS: '300',
    });
    expect(code).toBe(0);
    const origins = stdout.slice(stdout.indexOf('set by a source'));
    expect(origins.split('\n').map((line) => line.trim().split(/\s{2,}/))).toEqual([
      ['set by a source (every other option has its default):'],
      ['batching.lingerMs', `file ${file}`],
      ['batching.maxTasks', 'environment variable PARTNER_ENRICH_BATCHING__MAX_TASKS'],
      ['refdata.apiKey', 'environment variable PARTNER_ENRICH_REFDATA__API_KEY'],
      [''],
    ]);
    expect(stdout).not.toContain('very-secret-key-456');
  });

  it('regression: config check --quota warns when batching.maxTasks can never fit in the quota window', async () => {
    const sandbox = await startSandbox({ port: 0, orgs: 50, seed: 1 });
    try {
      sandbox.state.quotas.upsert({
        serviceKey: 'REFDATA_BULK_LOOKUP',
        organizationId: SANDBOX_DEFAULTS.organizationId,
        scope: 'organization',
        maxAmount: 400,
        reset: 'PT4S',
        resetMs: 4_000,
      });
      const { code, stderr } = await runCli(['config', 'check', '--quota'], {
        PARTNER_ENRICH_REFDATA__BASE_URL: sandbox.url,
        PARTNER_ENRICH_REFDATA__USAGE_URL: sandbox.url,
        PARTNER_ENRICH_REFDATA__API_KEY: 'sandbox-api-key',
      });
      expect(code).toBe(0);
      expect(stderr).toContain(
        'warning: batching.maxTasks 500 can never fit in the quota window of 400 tasks',
      );
    } finally {
      await sandbox.close();
    }
  });

  it('config check rejects an invalid value with its path and a stable code, without echoing it', async () => {
    const { code, stderr } = await runCli(['config', 'check'], {
      PARTNER_ENRICH_REFDATA__API_KEY: 'k',
      PARTNER_ENRICH_BATCHING__MAX_TASKS: '0',
    });
    expect(code).toBe(2);
    expect(stderr).toContain('CONFIG_INVALID');
    expect(stderr).toContain('batching.maxTasks');
  });

  it.each(['config check', 'run'])(
    'regression: %s took PARTNER_ENRICH_BATCHING__MAX_TASKS=0x10 as 16',
    async (command) => {
      const { code, stderr } = await runCli(command.split(' '), {
        PARTNER_ENRICH_REFDATA__API_KEY: 'k',
        PARTNER_ENRICH_KAFKA__BROKERS: '127.0.0.1:1',
        PARTNER_ENRICH_BATCHING__MAX_TASKS: '0x10',
      });
      expect(code).toBe(2);
      expect(stderr).toContain(
        'CONFIG_INVALID: Invalid configuration (1 problem):\n' +
          '  - batching.maxTasks: Invalid input: expected a whole number in decimal digits, e.g. 1000 ' +
          '(from environment variable PARTNER_ENRICH_BATCHING__MAX_TASKS)',
      );
      expect(stderr).not.toContain('0x10');
    },
  );

  it('regression: run logged the tracing endpoint with its password', async () => {
    const { code, stdout, stderr } = await runCli(['run'], {
      PARTNER_ENRICH_REFDATA__API_KEY: 'k',
      PARTNER_ENRICH_KAFKA__BROKERS: '127.0.0.1:1',
      PARTNER_ENRICH_TRACING__ENABLED: 'true',
      PARTNER_ENRICH_TRACING__ENDPOINT: 'https://otlpuser:OTLPtok3n@127.0.0.1:1',
    });
    expect(code).toBe(2);
    expect(stdout).toContain('"endpoint":"https://otlpuser:[redacted]@127.0.0.1:1/"');
    expect(stdout + stderr).not.toContain('OTLPtok3n');
  });

  it.each(['topics create', 'dlq replay --dry-run'])(
    "regression: %s against an unreachable broker hung in the client's retries and ended as an unexpected failure",
    async (command) => {
      const { code, stderr } = await runCli(command.split(' '), {
        PARTNER_ENRICH_REFDATA__API_KEY: 'k',
        PARTNER_ENRICH_KAFKA__BROKERS: '127.0.0.1:1',
      });
      expect(code).toBe(2);
      expect(stderr).toMatch(/^partner-enrich: KAFKA_UNAVAILABLE: no broker of 127\.0\.0\.1:1 answered: /);
      expect(stderr).not.toContain('unexpected failure');
    },
  );

  it.each([
    ['PARTNER_ENRICH_REFDATA__TIMEOUT_MS', 'refdata.timeoutMs'],
    ['PARTNER_ENRICH_RETRY__INITIAL_DELAY_MS', 'retry.initialDelayMs'],
  ])(
    'regression: config check passed %s=0, which the reference data client refuses later',
    async (variable, path) => {
      const { code, stderr } = await runCli(['config', 'check', '--quota'], {
        PARTNER_ENRICH_REFDATA__API_KEY: 'k',
        PARTNER_ENRICH_REFDATA__BASE_URL: 'http://127.0.0.1:1',
        [variable]: '0',
      });
      expect(code).toBe(2);
      expect(stderr).toContain('CONFIG_INVALID');
      expect(stderr).toContain(`${path}: Too small`);
      expect(stderr).not.toContain('REFDATA_INVALID_OPTIONS');
    },
  );

  it('demo enriches an NDJSON file through the sandbox and prints the summary table', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'demo-'));
    const lines = (await readFile('examples/partners.ndjson', 'utf8')).split('\n').slice(0, 400);
    await writeFile(join(dir, 'in.ndjson'), `${lines.join('\n')}\n`);
    const { code, stdout, stderr } = await runCli([
      'demo',
      '--no-progress',
      '--input',
      join(dir, 'in.ndjson'),
      '--output-dir',
      join(dir, 'out'),
    ]);
    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(/│ records read\s+│\s+400 │/);
    const matches = (await readFile(join(dir, 'out', 'matches.ndjson'), 'utf8')).trim().split('\n');
    const deadLetters = (await readFile(join(dir, 'out', 'dead-letters.ndjson'), 'utf8'))
      .trim()
      .split('\n')
      .filter(Boolean);
    expect(matches.length + deadLetters.length).toBe(400);
    expect(matches.filter((m) => JSON.parse(m).outcome === 'MATCH').length).toBeGreaterThan(200);
    for (const letter of deadLetters)
      expect(JSON.parse(letter).headers['pe.error.code']).toMatch(/^(DECODE|MAPPING)_/);
  });
  it('regression: demo with an input that cannot be read ended as an unexpected failure with a stack', async () => {
    const { code, stderr } = await runCli(['demo', '--no-progress', '--input', '/nonexistent.ndjson']);
    expect(code).toBe(2);
    expect(stderr).toMatch(
      /^partner-enrich: FILE_INPUT_UNREADABLE: input file \/nonexistent\.ndjson cannot be used: ENOENT/,
    );
    expect(stderr).not.toContain('unexpected failure');
  });

  it('regression: demo with an output directory under a file ended as an unexpected failure with a stack', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'demo-'));
    await writeFile(join(dir, 'afile'), '');
    const input = join(dir, 'in.ndjson');
    await writeFile(
      input,
      (await readFile('examples/partners.ndjson', 'utf8')).split('\n').slice(0, 5).join('\n'),
    );
    const outputDir = join(dir, 'afile', 'sub');
    const { code, stderr } = await runCli([
      'demo',
      '--no-progress',
      '--orgs',
      '100',
      '--input',
      input,
      '--output-dir',
      outputDir,
    ]);
    expect(code).toBe(2);
    expect(stderr).toMatch(
      new RegExp(
        `^partner-enrich: FILE_OUTPUT_UNWRITABLE: output directory ${outputDir} cannot be used: ENOTDIR`,
      ),
    );
  });

  it.each([['dead-letters.ndjson'], ['state/records.ndjson']])(
    'regression: demo given a file of its output directory (%s) as input destroyed it before reading it',
    async (name) => {
      const dir = await mkdtemp(join(tmpdir(), 'demo-'));
      const outputDir = join(dir, 'out');
      const input = join(outputDir, name);
      // A previous run's output, given back as the input of the next.
      const text = (await readFile('examples/partners.ndjson', 'utf8')).split('\n').slice(0, 5).join('\n');
      await mkdir(dirname(input), { recursive: true });
      await writeFile(input, text);
      const { code, stderr } = await runCli([
        'demo',
        '--no-progress',
        '--orgs',
        '100',
        '--input',
        input,
        '--output-dir',
        outputDir,
      ]);
      expect(code).toBe(2);
      expect(stderr).toMatch(
        new RegExp(`^partner-enrich: FILE_INPUT_IS_OUTPUT: input file ${input} is in the output directory`),
      );
      expect(await readFile(input, 'utf8')).toBe(text);
    },
  );

  it('regression: demo on a full disk ended as an unexpected failure with a stack (exit 1), not a line with its code', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'demo-'));
    const input = join(dir, 'in.ndjson');
    await writeFile(
      input,
      (await readFile('examples/partners.ndjson', 'utf8')).split('\n').slice(0, 5).join('\n'),
    );
    const outputDir = join(dir, 'out');
    await mkdir(outputDir);
    // Every write to /dev/full fails as on a full disk (ENOSPC).
    await symlink('/dev/full', join(outputDir, 'matches.ndjson'));
    const { code, stderr } = await runCli([
      'demo',
      '--no-progress',
      '--orgs',
      '100',
      '--input',
      input,
      '--output-dir',
      outputDir,
    ]);
    expect(code, stderr).toBe(2);
    expect(stderr).toMatch(
      new RegExp(
        `^partner-enrich: PIPELINE_OUTPUT_FAILED: outputs could not be written: output file ${outputDir}/matches.ndjson cannot be used: ENOSPC`,
      ),
    );
    expect(stderr).not.toContain('unexpected failure');
  });

  it('regression: demo reading a named pipe used up its records counting them, then waited for more for good', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'demo-'));
    const lines = (await readFile('examples/partners.ndjson', 'utf8')).split('\n').slice(0, 20);
    const fifo = join(dir, 'in.fifo');
    execFileSync('mkfifo', [fifo]);
    const child = startCli(
      ['demo', '--no-progress', '--orgs', '2000', '--input', fifo, '--output-dir', join(dir, 'out')],
      {},
    );
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk) => (stdout += chunk));
    child.stderr?.on('data', (chunk) => (stderr += chunk));
    const exited = once(child, 'exit').then(([code]) => code as number | null);
    try {
      // Written once, as a producer piping into it does: opening waits for the demo to read.
      await writeFile(fifo, `${lines.join('\n')}\n`);
      const outcome = await Promise.race([
        exited,
        new Promise<'alive'>((resolve) => setTimeout(() => resolve('alive'), 30_000).unref()),
      ]);
      expect(outcome, stderr).toBe(0);
      expect(stdout).toMatch(/│ records read\s+│\s+20 │/);
      const written = async (name: string) =>
        (await readFile(join(dir, 'out', name), 'utf8')).split('\n').filter(Boolean).length;
      expect((await written('matches.ndjson')) + (await written('dead-letters.ndjson'))).toBe(20);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });

  it('regression: a line far over the record size limit is dead-lettered without being held in memory', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'demo-'));
    try {
      const input = join(dir, 'in.ndjson');
      const lines = (await readFile('examples/partners.ndjson', 'utf8')).split('\n').slice(0, 20);
      // A 200 MiB record, in a process whose JavaScript heap may hold 128 MiB: decoded to a
      // string (as it was, after being gathered whole), it cannot fit and the process dies.
      const hugeStart = '{"partnerId":"P-HUGE","sourceSystem":"ERP-EU","names":["';
      const file = await open(input, 'w');
      await file.write(`${lines.slice(0, 10).join('\n')}\n${hugeStart}`);
      const mebibyte = Buffer.alloc(1 << 20, 'x');
      for (let i = 0; i < 200; i += 1) await file.write(mebibyte);
      await file.write(`"]}\n${lines.slice(10).join('\n')}\n`);
      await file.close();
      const hugeBytes = hugeStart.length + 200 * (1 << 20) + '"]}'.length;

      const out = join(dir, 'out');
      const { code, stdout, stderr } = await runCli(
        ['demo', '--no-progress', '--orgs', '2000', '--input', input, '--output-dir', out],
        { NODE_OPTIONS: '--max-old-space-size=128' },
      );

      expect(code, stderr).toBe(0);
      expect(stdout).toMatch(/│ records read\s+│\s+21 │/);
      expect(stdout).toMatch(/│ {3}decode\/FILE_RECORD_TOO_LARGE\s+│\s+1 │/);
      const written = async (name: string) =>
        (await readFile(join(out, name), 'utf8')).split('\n').filter(Boolean);
      const deadLetters = (await written('dead-letters.ndjson')).map(
        (line) =>
          JSON.parse(line) as { value: string; valueEncoding: string; headers: Record<string, string> },
      );
      expect((await written('matches.ndjson')).length + deadLetters.length).toBe(21);
      const tooLarge = deadLetters.filter((d) => d.headers['pe.error.code'] === 'FILE_RECORD_TOO_LARGE');
      expect(tooLarge).toHaveLength(1);
      const [letter] = tooLarge as [(typeof tooLarge)[number]];
      expect(letter.headers['pe.stage']).toBe('decode');
      expect(letter.headers['pe.origin.offset']).toBe('11');
      // Its start, bounded, as text: enough to tell which record it is.
      expect(letter.valueEncoding).toBe('utf8');
      expect(letter.value).toBe(`${hugeStart}${'x'.repeat(1024 - hugeStart.length)}`);
      expect(letter.headers['pe.error.message']).toBe(
        `line 11 of ${input} is ${hugeBytes} bytes, over files.maxRecordBytes (1048576): read to its end ` +
          `without being kept; the dead letter holds its first 1024 bytes, the whole record is still line 11 of ${input}`,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  /**
   * The demo on examples/partners.ndjson (3,005 records), interrupted with SIGINT once the first
   * results are out. No grace: the records in flight are left unfinished, as a stop that runs
   * out of it leaves them. `records`: the input records the output files hold, one line each in
   * matches.ndjson or dead-letters.ndjson (a failed lookup has both: its dead letter is not counted).
   */
  async function interruptedDemo() {
    const dir = await mkdtemp(join(tmpdir(), 'demo-'));
    const out = join(dir, 'out');
    const child = startCli(['demo', '--no-progress', '--orgs', '2000', '--output-dir', out], {
      PARTNER_ENRICH_SHUTDOWN__GRACE_MS: '0',
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk) => (stdout += chunk));
    child.stderr?.on('data', (chunk) => (stderr += chunk));
    const exited = once(child, 'exit').then(([code, signal]) => ({ code, signal }));
    const lines = async (name: string) =>
      (await readFile(join(out, name), 'utf8').catch(() => '')).split('\n').filter(Boolean);
    try {
      while ((await lines('matches.ndjson')).length === 0)
        await new Promise((resolve) => setTimeout(resolve, 50));
      child.kill('SIGINT');
      const exit = await exited;
      const deadLetters = (await lines('dead-letters.ndjson')).filter(
        (line) => (JSON.parse(line) as { headers: Record<string, string> }).headers['pe.stage'] !== 'lookup',
      );
      const records = (await lines('matches.ndjson')).length + deadLetters.length;
      return { exit, stdout, stderr, out, records };
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  }

  it('regression: Ctrl-C during demo ended it at once with exit 130 and no word that its outputs are partial', async () => {
    const { exit, stdout, stderr, out, records } = await interruptedDemo();
    expect(exit, stderr).toEqual({ code: 130, signal: null });
    expect(stderr).toMatch(
      new RegExp(`partner-enrich: stopped by SIGINT.*: the outputs in ${out}/ .*are partial`),
    );
    expect(records).toBeGreaterThan(0);
    expect(records).toBeLessThan(3005);
    expect(stdout).toMatch(/│ records read\s+│/);
  });

  it("regression: the demo's Ctrl-C message said the outputs were partial but not how many records were read and written", async () => {
    const { exit, stdout, stderr, out, records } = await interruptedDemo();
    expect(exit, stderr).toEqual({ code: 130, signal: null });
    const told = new RegExp(
      `stopped by SIGINT after (\\d+) of 3005 records read: the outputs in ${out}/ hold (\\d+) of them and are partial; run again for the records not in them`,
    ).exec(stderr);
    expect(told, stderr).not.toBeNull();
    const [, read, held] = (told as RegExpExecArray).map(Number);
    // Counted from what was written: the files hold that many records, and the table agrees.
    expect(held).toBe(records);
    expect(read).toBeGreaterThanOrEqual(records);
    expect(read).toBeLessThanOrEqual(3005);
    expect(stdout).toMatch(new RegExp(`│ records read\\s+│\\s+${read} │`));
  });

  it('regression: rerun start --timeout without --wait was ignored without a word', async () => {
    const { code, stderr } = await runCli(['rerun', 'start', '--timeout', '10']);
    expect(code).toBe(1);
    expect(stderr).toContain('error: --timeout applies only with --wait');
  });

  it('regression: rerun status --timeout without --follow was ignored, exit 0 whatever the job', async () => {
    const { code, stderr } = await runCli(['rerun', 'status', 'nightly', '--timeout', '5']);
    expect(code).toBe(1);
    expect(stderr).toContain('error: --timeout applies only with --follow');
  });

  it('regression: demo started outside the repository did not find its default input', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'demo-'));
    const { code, stdout, stderr } = await runCli(['demo', '--no-progress', '--orgs', '2000'], {}, dir);
    expect(code, stderr).toBe(0);
    const records = (await readFile('examples/partners.ndjson', 'utf8'))
      .split('\n')
      .filter((line) => line.trim());
    expect(stdout).toMatch(new RegExp(`│ records read\\s+│\\s+${records.length} │`));
    expect((await readFile(join(dir, 'out', 'matches.ndjson'), 'utf8')).length).toBeGreaterThan(0);
  });

  it.each([
    [['--since', 'yesterday'], "option '--since <time>' argument 'yesterday' is invalid"],
    [['--stage', 'foo'], "option '--stage <stage>' argument 'foo' is invalid"],
  ])('regression: dlq replay %j was not refused as a bad flag value', async (flag, message) => {
    const { code, stderr } = await runCli(['dlq', 'replay', '--dry-run', ...flag], {
      PARTNER_ENRICH_KAFKA__BROKERS: '127.0.0.1:1',
    });
    expect(code).toBe(1);
    expect(stderr).toContain(`error: ${message}`);
    expect(stderr).not.toContain('KAFKA_UNAVAILABLE');
  });

  // A sandbox on a free port, so that one started before the fix only serves until it says so.
  const sandboxWith = (...flags: string[]) => ['sandbox', '--host', '127.0.0.1', '--port', '0', ...flags];
  it.each([
    [
      sandboxWith('--orgs', '0x10'),
      "option '--orgs <n>' argument '0x10' is invalid. --orgs must be a whole number in decimal digits from 1 to 1000000.",
    ],
    [
      sandboxWith('--seed', '1e3'),
      "option '--seed <n>' argument '1e3' is invalid. --seed must be a whole number in decimal digits, 0 or more.",
    ],
    [
      sandboxWith('--port', '0x10'),
      "option '--port <port>' argument '0x10' is invalid. --port must be a whole number in decimal digits from 0 to 65535.",
    ],
    [
      sandboxWith('--port', ''),
      "option '--port <port>' argument '' is invalid. --port must be a whole number in decimal digits from 0 to 65535.",
    ],
    [
      sandboxWith('--error-rate', '0x1'),
      "option '--error-rate <share>' argument '0x1' is invalid. --error-rate must be a number in decimal digits from 0 to 1.",
    ],
    [
      ['demo', '--orgs', '2e3', '--input', 'missing.ndjson'],
      "option '--orgs <n>' argument '2e3' is invalid. --orgs must be a whole number in decimal digits from 1 to 1000000.",
    ],
    // Taken by the flag and refused by the sandbox: SANDBOX_INVALID_OPTIONS, exit 2 (demo's after
    // it had started the sandbox), not the flag's error.
    [
      sandboxWith('--orgs', '0'),
      "option '--orgs <n>' argument '0' is invalid. --orgs must be a whole number in decimal digits from 1 to 1000000.",
    ],
    [
      ['demo', '--orgs', '1000001', '--input', 'missing.ndjson'],
      "option '--orgs <n>' argument '1000001' is invalid. --orgs must be a whole number in decimal digits from 1 to 1000000.",
    ],
  ])(
    'regression: %j was taken, though not a whole number in decimal digits in its range',
    async (args, message) => {
      const child = startCli(args, {});
      let stdout = '';
      let stderr = '';
      child.stdout?.on('data', (chunk) => (stdout += chunk));
      child.stderr?.on('data', (chunk) => (stderr += chunk));
      const exited = once(child, 'exit').then(([code]) => code as number | null);
      try {
        const outcome = await Promise.race([
          exited,
          new Promise<'serving'>((resolve) =>
            child.stdout?.on('data', () => stdout.includes('listening on') && resolve('serving')),
          ),
        ]);
        expect(outcome, stdout + stderr).toBe(1);
        expect(stderr.split('\n')[0]).toBe(`error: ${message}`);
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }
    },
  );

  it('regression: sandbox on a port in use ended as an unexpected failure with a stack', async () => {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    try {
      const { code, stderr } = await runCli([
        'sandbox',
        '--host',
        '127.0.0.1',
        '--port',
        String(port),
        '--orgs',
        '100',
      ]);
      expect(code).toBe(2);
      expect(stderr).toMatch(
        new RegExp(
          `^partner-enrich: SANDBOX_LISTEN_FAILED: the sandbox cannot listen on 127\\.0\\.0\\.1:${port}: .*EADDRINUSE`,
        ),
      );
    } finally {
      server.close();
    }
  });

  it('regression: sandbox exits 0 on SIGTERM while it holds a request (frozen, it waited for the request for good)', async () => {
    const child = startCli(['sandbox', '--host', '127.0.0.1', '--port', '0', '--orgs', '100'], {});
    const exited = once(child, 'exit').then(([code]) => code as number | null);
    let stdout = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk));
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout?.on('data', () => /listening on (http:\S+)/.test(stdout) && resolve());
        void exited.then(() => reject(new Error(`sandbox ended: ${stdout}`)));
      });
      const url = (/listening on (http:\S+)/.exec(stdout) as RegExpExecArray)[1] as string;
      const put = (body: unknown) =>
        fetch(`${url}/admin/faults`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      await put({ frozen: true });
      // A valid request, held unanswered while the sandbox is frozen.
      const held = fetch(`${url}/v3/businesspartners/search`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': SANDBOX_DEFAULTS.apiKey },
        body: JSON.stringify({ query: 'acme' }),
      }).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 500));
      child.kill('SIGTERM');
      const outcome = await Promise.race([
        exited,
        new Promise<'alive'>((resolve) => setTimeout(() => resolve('alive'), 20_000).unref()),
      ]);
      expect(outcome, stdout).toBe(0);
      await held;
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});
