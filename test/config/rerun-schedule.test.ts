import { describe, expect, it } from 'vitest';
import { loadConfig, type ConfigInput } from '../../src/config/index.ts';
import { rerunScheduleSpec } from '../../src/rerun/rerun-schedule.ts';
import { API_KEY_ENV, configErrorOf } from './helpers.ts';

const withEnv = (env: Record<string, string>, overrides: ConfigInput = {}) =>
  loadConfig({ env: { ...API_KEY_ENV, ...env }, overrides });

const problemsOf = (env: Record<string, string>, overrides: ConfigInput = {}) =>
  configErrorOf(() => withEnv(env, overrides), 'CONFIG_INVALID').details['problems'];

describe('rerunSchedule', () => {
  it('is off unless every or cron is set', () => {
    const config = withEnv({});
    expect(config.rerunSchedule).toEqual({ catchUp: false });
    expect(rerunScheduleSpec(config.rerunSchedule)).toBeUndefined();
  });

  it('is read from environment variables', () => {
    const config = withEnv({
      PARTNER_ENRICH_RERUN_SCHEDULE__CRON: '0 2 * * *',
      PARTNER_ENRICH_RERUN_SCHEDULE__TIMEZONE: 'Europe/Berlin',
      PARTNER_ENRICH_RERUN_SCHEDULE__CATCH_UP: 'true',
    });
    expect(config.rerunSchedule).toEqual({ cron: '0 2 * * *', timezone: 'Europe/Berlin', catchUp: true });
    expect(rerunScheduleSpec(config.rerunSchedule)).toEqual({ cron: '0 2 * * *', timezone: 'Europe/Berlin' });
    expect(
      rerunScheduleSpec(withEnv({ PARTNER_ENRICH_RERUN_SCHEDULE__EVERY: '1h30m' }).rerunSchedule),
    ).toEqual({ everyMs: 5_400_000 });
  });

  it('takes every or cron, not both, naming where each came from', () => {
    expect(
      problemsOf({ PARTNER_ENRICH_RERUN_SCHEDULE__EVERY: '24h' }, { rerunSchedule: { cron: '0 2 * * *' } }),
    ).toEqual([
      {
        path: 'rerunSchedule.cron',
        message: 'set either every or cron, not both',
        source: 'command-line flags',
      },
    ]);
  });

  it('takes a time zone only with cron', () => {
    expect(problemsOf({}, { rerunSchedule: { every: '24h', timezone: 'Europe/Berlin' } })).toEqual([
      {
        path: 'rerunSchedule.timezone',
        message: 'applies to cron only (every counts from 1970-01-01 UTC)',
        source: 'command-line flags',
      },
    ]);
  });

  it('rejects an interval, an expression or a time zone it cannot schedule with, each at its path', () => {
    const problems = (section: ConfigInput['rerunSchedule']) =>
      (problemsOf({}, { rerunSchedule: section }) as { path: string; message: string }[]).map(
        ({ path, message }) => `${path}: ${message}`,
      );
    expect(problems({ every: '30s' })).toEqual(['rerunSchedule.every: must be at least 1m']);
    expect(problems({ every: '30000d' })).toEqual([
      "rerunSchedule.every: must be at most 365d; for rarer reruns, a cron expression (yearly: '0 2 1 1 *')",
    ]);
    expect(problems({ every: 'nightly' })).toEqual([
      'rerunSchedule.every: must be a duration such as 24h, 30m or 1h30m (units d, h, m, s)',
    ]);
    expect(problems({ cron: '0 0 30 2 *' })).toEqual(['rerunSchedule.cron: never matches a date']);
    expect(problems({ cron: '0 0 2 * * *', timezone: 'Mars/Olympus' })).toEqual([
      expect.stringMatching(/^rerunSchedule\.cron: must be a 5-field cron expression/),
      'rerunSchedule.timezone: must be an IANA time zone such as UTC or Europe/Berlin',
    ]);
  });
});
