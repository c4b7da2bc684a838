// `run`'s schedule flags, checked at start before anything is connected.
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';

const API_KEY = { PARTNER_ENRICH_REFDATA__API_KEY: 'k' };

// Each test starts a Node process that loads the whole CLI; on a busy 2-core machine that takes seconds.
describe('partner-enrich run, rerun schedule', { timeout: 60_000 }, () => {
  it('--help describes the schedule flags', async () => {
    const { code, stdout } = await runCli(['run', '--help']);
    expect(code).toBe(0);
    for (const flag of ['--rerun-every <interval>', '--rerun-cron <expression>', '--rerun-timezone <zone>'])
      expect(stdout).toContain(flag);
    expect(stdout).toContain('--rerun-catch-up');
  });

  it('refuses --rerun-every with a cron schedule from the environment, with a stable code', async () => {
    const { code, stderr } = await runCli(['run', '--rerun-every', '24h'], {
      ...API_KEY,
      PARTNER_ENRICH_RERUN_SCHEDULE__CRON: '0 2 * * *',
    });
    expect(code).toBe(2);
    expect(stderr).toContain('partner-enrich: CONFIG_INVALID: Invalid configuration (1 problem)');
    expect(stderr).toContain(
      'rerunSchedule.cron: set either every or cron, not both (from environment variable PARTNER_ENRICH_RERUN_SCHEDULE__CRON)',
    );
  });

  it("regression: names the command line as the source of a flag's invalid value (it said 'from overrides')", async () => {
    const { code, stderr } = await runCli(['run', '--rerun-cron', 'every night'], API_KEY);
    expect(code).toBe(2);
    expect(stderr).toMatch(/rerunSchedule\.cron: .* \(from command-line flags\)/);
  });
});
