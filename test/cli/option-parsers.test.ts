// The refusals of the command-line option parsers: commander prints them after its own
// "option '--port <port>' argument '0x10' is invalid." and exits 1.
import { Command, InvalidArgumentError, type Option } from 'commander';
import { describe, expect, it, vi } from 'vitest';
import { share, wholeNumber } from '../../src/cli/option-parsers.ts';

/** What `parse` says refusing `value`; undefined if it takes it. */
function refusal(parse: (value: string) => unknown, value: string): string | undefined {
  try {
    parse(value);
    return undefined;
  } catch (error) {
    if (error instanceof InvalidArgumentError) return error.message;
    throw error;
  }
}

/** The program src/cli/main.ts builds, caught where it would parse the command line. */
async function program(): Promise<Command> {
  const parse = vi.spyOn(Command.prototype, 'parseAsync').mockResolvedValue(new Command());
  try {
    await import('../../src/cli/main.ts');
    const [built] = parse.mock.contexts as Command[];
    if (!built) throw new Error('main.ts built no program');
    return built;
  } finally {
    parse.mockRestore();
  }
}

/** Every option of `command` and its subcommands, with the command path. */
const optionsOf = (command: Command, path: string[] = []): { path: string; option: Option }[] => [
  ...command.options.map((option) => ({ path: [...path, command.name()].join(' '), option })),
  ...command.commands.flatMap((sub) => optionsOf(sub, [...path, command.name()])),
];

describe('wholeNumber', () => {
  const port = wholeNumber('--port', 0, 65_535);
  const orgs = wholeNumber('--orgs', 0);

  it('takes decimal digits within its range', () => {
    expect(port('0')).toBe(0);
    expect(port(' 65535 ')).toBe(65_535);
    expect(orgs('20000')).toBe(20_000);
  });

  it.each(['0x10', '1e3', '', '2.5', '-1', '65536', 'ten'])(
    'refuses %j naming the flag and its rule',
    (value) => {
      expect(refusal(port, value)).toBe('--port must be a whole number in decimal digits from 0 to 65535.');
    },
  );

  it('without a maximum, says from where', () => {
    expect(refusal(orgs, '0x10')).toBe('--orgs must be a whole number in decimal digits, 0 or more.');
  });
});

describe('share', () => {
  it('from 0 to 1 where 0 means none', () => {
    const errorRate = share('--error-rate', { zero: true });
    expect(errorRate('0')).toBe(0);
    expect(errorRate('.5')).toBe(0.5);
    expect(refusal(errorRate, '0x1')).toBe('--error-rate must be a number in decimal digits from 0 to 1.');
    expect(refusal(errorRate, '1.5')).toBe('--error-rate must be a number in decimal digits from 0 to 1.');
  });

  it('more than 0 and at most 1 otherwise', () => {
    const quotaShare = share('--quota-share');
    expect(quotaShare('1')).toBe(1);
    expect(refusal(quotaShare, '0')).toBe(
      '--quota-share must be a number in decimal digits, more than 0 and at most 1.',
    );
  });
});

describe('every numeric flag of the CLI', { timeout: 30_000 }, () => {
  it('regression: a refused number named the flag in camelCase (port, batchSize, retryAfterSeconds) and did not say decimal digits', async () => {
    // A numeric flag: its parser reads "1" as a number.
    const numeric = optionsOf(await program()).filter(({ option }) => {
      try {
        return typeof option.parseArg?.('1', undefined) === 'number';
      } catch {
        return false;
      }
    });
    expect(numeric.map(({ path, option }) => `${path} ${option.long}`)).toEqual(
      expect.arrayContaining(['partner-enrich sandbox --port', 'partner-enrich rerun start --batch-size']),
    );
    const misnamed = numeric
      .map(({ path, option }) => ({
        flag: `${path} ${option.long}`,
        refusal: refusal((value) => option.parseArg?.(value, undefined), '0x10'),
        rule: new RegExp(`^${option.long} must be (a whole number|a number) in decimal digits[ ,]`),
      }))
      .filter(({ refusal, rule }) => !rule.test(refusal ?? ''))
      .map(({ flag, refusal }) => `${flag}: ${refusal}`);
    expect(misnamed).toEqual([]);
  });
});
