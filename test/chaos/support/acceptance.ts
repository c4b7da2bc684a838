// The acceptance every scenario ends with (issues 9 and 10), checked softly so that a failing
// scenario reports every broken rule with its numbers, not only the first.
import { expect } from 'vitest';
import { KILL_WINDOW_MS } from './reconcile.ts';
import type { ScenarioReport } from './scenario.ts';

/** "Within 10% of batching.maxInFlightRecords". */
const IN_FLIGHT_TOLERANCE = 1.1;

export function expectAcceptance(report: ScenarioReport): void {
  const { payment, duplicates, processes } = report;
  expect.soft(report.lost, 'records lost (no MatchResult and no dead letter)').toBe(0);
  expect
    .soft(report.commits.behind, 'committed offsets behind the end offsets, per partition')
    .toEqual(Object.fromEntries(Object.keys(report.commits.behind).map((p) => [p, 0])));
  expect.soft(report.validDeadLettered, 'valid records dead-lettered, by stage/code').toEqual({});
  expect.soft(report.malformedMatched, 'malformed records with a MatchResult').toBe(0);
  expect.soft(payment.paidTwice.byCause.rebalance, 'tasks paid twice from rebalances').toBe(0);
  expect
    .soft(
      payment.paidTwice.byCause.ledgerNotConsulted,
      'tasks paid twice after a restart although the first bulk was in the ledger before it',
    )
    .toBe(0);
  expect
    .soft(duplicates.byCause.differentBulks, 'records with MatchResults from two different bulks')
    .toBe(0);
  expect
    .soft(duplicates.byCause.matchAndDeadLetter, 'records with both a MatchResult and a dead letter')
    .toBe(0);
  if (report.disruptions.length === 0) {
    expect.soft(duplicates.positions, 'duplicate outputs in a scenario where nothing was killed').toBe(0);
  }
  expect.soft(processes.cleanExitsWhileWanted, 'replicas that exited with 0 while they should run').toBe(0);
  // A SIGTERM finishes or abandons the work in flight, commits and exits 0 within its bound:
  // in a broker failover kafkajs's consumers waited out their retries' backoff while a group's
  // coordinator moved, past the bound (exit 1, "did not stop in time").
  expect
    .soft(processes.sigtermExitCodes, 'SIGTERM exit codes')
    .toEqual(processes.sigtermExitCodes.map(() => 0));
  expect
    .soft(report.inFlightPeak, `peak records in flight (limit ${report.maxInFlightRecords} + 10%)`)
    .toBeLessThanOrEqual(Math.floor(report.maxInFlightRecords * IN_FLIGHT_TOLERANCE));
  expectPaidOnlyWhatWasNeeded(report);
}

/**
 * Issue 10: no task and no quota unit paid beyond the lookups needed (lookups.ts), apart from
 * the exceptions the issue names: a retry after the service answered a task FAILED, one new
 * lookup per task of a bulk the restarted service forgot, and the windows that remain in
 * theory, stated in GUARANTEES.md with their size: a bulk or a consume the service answered in
 * the last milliseconds before a replica died (or stamped by the service just after: its request
 * was in flight), not yet in the state topic (KILL_WINDOW_MS; a slower record fails here). Every record's MatchResult is about its own content or a newer
 * version's.
 */
function expectPaidOnlyWhatWasNeeded(report: ScenarioReport): void {
  const { lookups } = report;
  const windows = report.payment.killWindows;
  expect
    .soft(
      lookups.resultsOfOtherContent,
      "MatchResults from a bulk that looked up neither the record's content nor a newer version's",
    )
    .toBe(0);
  expect.soft(lookups.reusedNeverLookedUp, 'reused MatchResults whose content was never looked up').toBe(0);
  expect
    .soft(
      lookups.beyondNeeded.other,
      `tasks beyond the lookups needed (neither a retry after FAILED, nor a bulk the restarted service forgot, nor one of the ${windows.bulks} bulks created within ${KILL_WINDOW_MS} ms of a replica's death and not recorded)`,
    )
    .toBeLessThanOrEqual(windows.tasksAgain);
  expect
    .soft(
      lookups.quotaBeyondNeeded,
      `quota units beyond the lookups needed, retries, forgotten bulks and the ${windows.consumes} consumes answered within ${KILL_WINDOW_MS} ms of a replica's death`,
    )
    .toBeLessThanOrEqual(windows.units);
  // Every task the service got stands on a unit consumed for it, killed processes or not (a
  // dead member's paid intent lends its units to whoever adopts its tasks, each unit once); a
  // bulk created in a kill window is looked up again under the units its first creation used.
  expect
    .soft(
      report.payment.quotaConsumed,
      'quota units consumed, against tasks paid less those looked up again after a kill window (none without its unit)',
    )
    .toBeGreaterThanOrEqual(report.lookups.tasks - windows.tasksAgain);
  // Nothing died between an intent and its quota consume: no lookup may go unpaid by the quota.
  if (report.processes.pipelineKills === 0 && report.processes.selfExits.length === 0)
    expect
      .soft(report.payment.quotaConsumed, 'quota units consumed, against tasks paid (nothing was killed)')
      .toBe(report.lookups.tasks);
  if (report.sandbox.restarts === 0)
    expect.soft(lookups.beyondNeeded.serviceRestart, 'forgotten bulks without a service restart').toBe(0);
}
