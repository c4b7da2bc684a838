// What an operator wants in the log: state changes (pauses, resumes, retries, dead
// letters), not one line per record; counts per record go to metrics.
import type { Logger } from '../observability/index.ts';
import type { PipelineObserver } from '../pipeline/ports.ts';

/**
 * Logs events that come per record once per kind and turn of the event loop, with their
 * count: a bulk that fails retries or dead-letters each of its records in one turn, which
 * was one line per record (500 lines for one failed bulk), and a restart adopting the
 * intents of the records in flight at a kill one line per partner (300 for 300).
 */
function perTurn(
  log: (fields: Record<string, unknown>) => void,
): (fields: Record<string, unknown>, records?: number) => void {
  const counts = new Map<string, { fields: Record<string, unknown>; records: number }>();
  const flush = () => {
    for (const { fields, records } of counts.values()) log({ ...fields, records });
    counts.clear();
  };
  return (fields, records = 1) => {
    const key = JSON.stringify(fields);
    const seen = counts.get(key);
    if (seen) seen.records += records;
    else {
      if (counts.size === 0) setImmediate(flush);
      counts.set(key, { fields, records });
    }
  };
}

/** How often records not keyed by their partner id are logged: a steady upstream fault, counted in metrics. */
const KEY_WARNING_INTERVAL_MS = 60_000;

/**
 * Counts records not keyed by their partner id and logs them at the next turn of the event
 * loop, then at most once a KEY_WARNING_INTERVAL_MS with the counts since, and the first
 * record's position as an example to look at.
 */
function keyWarnings(logger: Logger): NonNullable<PipelineObserver['keyNotPartnerId']> {
  let counts = { missing: 0, other: 0 };
  let example = '';
  let lastAt = -Infinity;
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    timer = undefined;
    lastAt = Date.now();
    logger.warn(
      { records: counts, example },
      "input records not keyed by their partner id: a partner's records on several partitions have a partner state on each (a Created event again, unchanged content looked up again); key the input by partner id (docs/OPERATIONS.md#input-not-keyed-by-partner-id)",
    );
    counts = { missing: 0, other: 0 };
  };
  return ({ topic, partition, offset }, missing) => {
    if (missing) counts.missing += 1;
    else counts.other += 1;
    if (timer) return;
    example = `${topic}[${partition}]@${offset}${missing ? ' (no key)' : ''}`;
    // Not kept alive for it: the metric has the counts of a last interval cut short by a stop.
    timer = setTimeout(flush, Math.max(0, lastAt + KEY_WARNING_INTERVAL_MS - Date.now())).unref();
  };
}

export function logObserver(logger: Logger): PipelineObserver {
  const deadLettered = perTurn((fields) => logger.warn(fields, 'records dead-lettered'));
  const retried = perTurn((fields) => logger.info(fields, 'lookups retried'));
  const adopted = perTurn((fields) =>
    logger.warn(
      fields,
      fields.paid
        ? 'submission intents of a dead submitter adopted: looked up under the quota it consumed'
        : 'submission intents of a dead submitter adopted: looked up, consuming quota (it had not)',
    ),
  );
  return {
    intakePaused: (reason) =>
      logger.warn(
        { reason },
        reason === 'quota' ? 'quota over limit: intake paused until it resets' : 'intake paused',
      ),
    intakeResumed: (reason) => logger.info({ reason }, 'intake resumed'),
    deadLetter: (stage, code) => deadLettered({ stage, code }),
    keyNotPartnerId: keyWarnings(logger),
    retry: (code, attempt) => retried({ code, attempt }),
    bulkFinished: (bulkId, tasks, ms) => logger.debug({ bulkId, tasks, ms }, 'bulk finished'),
    bulkFailed: (tasks, code, ms) => logger.warn({ tasks, code, ms }, 'bulk failed'),
    committed: (positions) => logger.debug({ positions }, 'committed'),
    commitFailed: (reason) => logger.warn({ reason }, 'commit failed; tried again at the next interval'),
    intentAdopted: (records, paid) => adopted({ paid }, records),
    ledgerJournalRepublished: (counts) =>
      logger.warn(
        counts,
        'bulk ledger journal: what a killed process had paid for and the state topic lacked is written there (not paid again)',
      ),
    bulkGone: (records) =>
      logger.warn(
        { records },
        'the service no longer knows a bulk it created: its records are looked up anew',
      ),
    partitionsAssigned: (partitions) => logger.info({ partitions }, 'partitions assigned'),
    partitionsRevoked: (partitions) =>
      logger.info({ partitions }, 'partitions revoked: their work is dropped'),
    fenced: (partition, reason) =>
      logger.warn(
        { partition, reason },
        'transaction fenced: the partition has a newer owner; nothing of the transaction is visible, its records are processed again',
      ),
    transactionAbandoned: (partition, reason) =>
      logger.warn(
        { partition, reason },
        "transaction failed as its partition moved: the partition's next owner ends it and processes its records from the committed position",
      ),
  };
}
