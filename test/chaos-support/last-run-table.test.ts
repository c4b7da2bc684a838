// The "Last run" table of docs/GUARANTEES.md is printed from the chaos reports, not typed.
import { describe, expect, it } from 'vitest';
import { lastRunTable } from '../chaos/support/last-run-table.ts';
import type { ScenarioReport } from '../chaos/support/scenario.ts';

/** The fields of a report the table reads; the rest of a real one is left out. */
function report(scenario: string, changes: Partial<Record<string, unknown>> = {}): ScenarioReport {
  return {
    scenario,
    seconds: 51.6,
    input: { records: 5100 },
    lost: 0,
    commits: { atEnd: true },
    duplicates: { positions: 0, extraOutputs: 0, byCause: { reReadReused: 0, reReadSameBulk: 0 } },
    lookups: { tasks: 3828, needed: 3828, beyondNeeded: { total: 0, retry: 0, serviceRestart: 0, other: 0 } },
    payment: { quotaConsumed: 3828, killWindows: { bulks: 0, tasksAgain: 0, consumes: 2, units: 200 } },
    inFlightPeak: 1000,
    maxInFlightRecords: 1000,
    processes: { supervisorRestarts: 3 },
    ...changes,
  } as unknown as ScenarioReport;
}

describe('lastRunTable', () => {
  it('prints one row per scenario, by name, with duplicates and payments beyond need by cause', () => {
    const table = lastRunTable([
      report('service-restart', {
        lookups: {
          tasks: 3100,
          needed: 3000,
          beyondNeeded: { total: 100, retry: 0, serviceRestart: 100, other: 0 },
        },
      }),
      report('kill-coalescing', {
        duplicates: { positions: 369, extraOutputs: 414, byCause: { reReadReused: 369, reReadSameBulk: 0 } },
      }),
    ]).split('\n');
    expect(table).toHaveLength(4);
    expect(table[2]).toBe(
      '| `kill-coalescing` | 52 s | 5,100 | 0 | yes | 414 (369 records: reReadReused 369) | 3,828 / 3,828 | 3,828 | 0 | 0 (0) / 2 (200) | 1,000 / 1,000 | 3 |',
    );
    expect(table[3]).toContain('| 3,100 / 3,000 | 3,828 | 100 (service restart 100) |');
  });
});
