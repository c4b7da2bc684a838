// Intake: takes records from the source up to the in-flight cap, drops copies Kafka
// delivers again, decodes and maps each record in its partition's order, and hands the
// result on as work. Each partition has its own chain, so a partition whose records wait
// for the schema registry pauses alone while the others go on (and the consumer keeps
// heartbeating: offering never waits).
import { isPartnerEnrichError, type PartnerEnrichError } from '../errors.ts';
import { MappingError } from '../mapping/errors.ts';
import type { LookupTask } from '../mapping/lookup-task.ts';
import type { BulkLedger } from '../bulk/bulk-ledger.ts';
import { backoffDelay, type BackoffOptions } from '../retry/backoff.ts';
import { partnerIdOfKey, type PartnerDecoder } from '../serde/partner-decoders.ts';
import type { PartnerRecord } from '../serde/partner-record.ts';
import type { CommitWatermark } from './commit-watermark.ts';
import { isFatal } from './errors.ts';
import type { FlowControl } from './flow-control.ts';
import type { FailureStage } from './outputs.ts';
import type { Ownership } from './ownership.ts';
import type { PartitionRef, PipelineObserver } from './ports.ts';
import {
  nextWorkId,
  positionKey,
  type InputRecord,
  type PartnerWork,
  type SourcePosition,
} from './records.ts';

export interface IntakeOptions {
  maxInFlightRecords: number;
  /** Backoff while the schema registry is away; it is waited for, never a reason to dead-letter. */
  registryBackoff: BackoffOptions;
  /**
   * The input has more than one partition: records whose key does not name their partner are
   * reported (PipelineObserver.keyNotPartnerId), since partner state is kept per partition.
   */
  checkKeys?: boolean;
}

export interface IntakeParts {
  decoder: PartnerDecoder;
  toTask: (partner: PartnerRecord) => LookupTask;
  ledger: BulkLedger;
  watermark: CommitWatermark;
  ownership: Ownership;
  flow: FlowControl;
  observer: PipelineObserver;
  /** Work ready for per-key scheduling. */
  schedule(work: PartnerWork): void;
  /** A failure the pipeline cannot go on after (a fatal code, or a bug: an error without a code of ours). */
  fail(error: Error): void;
  /** A record that cannot become work: dead-letter it. */
  reject(input: InputRecord, stage: FailureStage, error: PartnerEnrichError, epoch: number): void;
}

interface PartitionIntake {
  ref: PartitionRef;
  epoch: number;
  /** Its state is restored: records may be admitted. */
  restored: boolean;
  chain: Promise<void>;
  /** Records whose admission waits in `chain`: while there are any, the next one waits behind them. */
  queued: number;
  /** Records taken and not yet finished. */
  inFlight: number;
  waitingForRegistry: boolean;
}

export class Intake {
  readonly #parts: IntakeParts;
  readonly #options: IntakeOptions;
  readonly #partitions = new Map<string, PartitionIntake>();
  #inFlight = 0;
  #peak = 0;
  #stopped = false;
  #idleWaiters: (() => void)[] = [];

  constructor(parts: IntakeParts, options: IntakeOptions) {
    this.#parts = parts;
    this.#options = options;
  }

  /** Records taken and not yet finished (outputs written or dropped with their partition). */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** The most records ever in flight at once. */
  get peakInFlight(): number {
    return this.#peak;
  }

  /** Partitions whose records wait for the schema registry. */
  get waitingForRegistry(): PartitionRef[] {
    return [...this.#partitions.values()].filter((p) => p.waitingForRegistry).map((p) => p.ref);
  }

  /** Partitions whose state is not yet restored: their records wait. */
  get restoring(): PartitionRef[] {
    return [...this.#partitions.values()].filter((p) => !p.restored).map((p) => p.ref);
  }

  /** A partition is ours from now on; its records are admitted once `ready` resolves. */
  assign(ref: PartitionRef, epoch: number, ready: Promise<void>): void {
    const { flow } = this.#parts;
    flow.pause('restoring', ref);
    const intake: PartitionIntake = {
      ref,
      epoch,
      restored: false,
      chain: Promise.resolve(),
      queued: 0,
      inFlight: 0,
      waitingForRegistry: false,
    };
    const restored = () => {
      intake.restored = true;
      flow.resume('restoring', ref);
    };
    intake.chain = ready.then(restored, restored);
    this.#partitions.set(keyOf(ref), intake);
  }

  /** A partition is no longer ours: its records in flight are forgotten (they are read again by its new owner). */
  revoke(ref: PartitionRef): void {
    const intake = this.#partitions.get(keyOf(ref));
    if (!intake) return;
    this.#partitions.delete(keyOf(ref));
    this.#release(intake.inFlight);
  }

  offer(input: InputRecord): boolean {
    const intake = this.#partitions.get(keyOf(input.position));
    // Not (or no longer) ours, e.g. a batch fetched before a rebalance: not taken, and not
    // resolved at the source, so whoever owns the partition reads it.
    if (!intake || this.#stopped) return false;
    if (this.#inFlight >= this.#options.maxInFlightRecords) {
      this.#parts.flow.pause('backpressure');
      return false;
    }
    if (!this.#parts.watermark.track(input.position)) return true;
    this.#inFlight += 1;
    intake.inFlight += 1;
    this.#peak = Math.max(this.#peak, this.#inFlight);
    this.#parts.observer.recordIn?.();
    if (this.#inFlight >= this.#options.maxInFlightRecords) this.#parts.flow.pause('backpressure');
    const { epoch } = intake;
    // Most records are admitted here and now (decoded without waiting for the registry): a
    // promise per record cost more than decoding it. The rest keep their partition's order
    // behind those waiting.
    if (intake.restored && intake.queued === 0) {
      try {
        if (this.#admitNow(input, intake, epoch)) return true;
      } catch (error) {
        this.#parts.fail(error as Error);
        return true;
      }
    }
    intake.queued += 1;
    intake.chain = intake.chain.then(async () => {
      try {
        await this.#admit(input, intake, epoch);
      } finally {
        intake.queued -= 1;
      }
    });
    return true;
  }

  /**
   * Offsets without a record for the pipeline (SourceHandler.passed): whether they are now
   * tracked in their partition's order, to be finished at once. Nothing of them is in flight.
   */
  pass(position: SourcePosition): boolean {
    // Before its restore (exactly-once: before the rewind to the committed position) a
    // partition's fetches may still be from where its former owner or an earlier join left it.
    const intake = this.#partitions.get(keyOf(position));
    if (!intake?.restored || this.#stopped) return false;
    return this.#parts.watermark.track(position);
  }

  /** Records of a partition are finished (outputs written); counts only for the current owner. */
  finished(position: PartitionRef, count: number): void {
    const intake = this.#partitions.get(keyOf(position));
    if (!intake) return;
    intake.inFlight -= count;
    this.#release(count);
  }

  /** Resolves when nothing is in flight. */
  idle(): Promise<void> {
    if (this.#inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  stop(): void {
    this.#stopped = true;
  }

  #release(count: number): void {
    this.#inFlight -= count;
    if (this.#inFlight <= this.#options.maxInFlightRecords / 2) this.#parts.flow.resume('backpressure');
    if (this.#inFlight === 0) {
      const waiters = this.#idleWaiters;
      this.#idleWaiters = [];
      for (const wake of waiters) wake();
    }
  }

  #current(intake: PartitionIntake, epoch: number): boolean {
    return !this.#stopped && this.#parts.ownership.owns(intake.ref, epoch);
  }

  async #admit(input: InputRecord, intake: PartitionIntake, epoch: number): Promise<void> {
    if (!this.#current(intake, epoch)) return;
    if (input.refused) return this.#parts.reject(input, 'decode', input.refused, epoch);
    if (input.value === null) {
      let partnerId: string;
      try {
        partnerId = await this.#partnerIdOfKey(input.key, intake, epoch);
      } catch (error) {
        if (!this.#current(intake, epoch)) return;
        return this.#reject(input, 'decode', error, epoch);
      }
      if (!this.#current(intake, epoch)) return;
      return this.#tombstone(input, partnerId, epoch);
    }
    const { decoder } = this.#parts;
    const value = input.value;
    let partner: PartnerRecord;
    try {
      partner = await this.#awaitRegistry(() => decoder.decode(value), intake, epoch);
    } catch (error) {
      if (!this.#current(intake, epoch)) return;
      return this.#reject(input, 'decode', error, epoch);
    }
    if (!this.#current(intake, epoch)) return;
    this.#accept(input, partner, epoch);
  }

  /** Admits the record without waiting, if nothing has to be waited for (false: it must be awaited). */
  #admitNow(input: InputRecord, intake: PartitionIntake, epoch: number): boolean {
    const { decoder } = this.#parts;
    // A record its source refused has nothing to decode: #admit dead-letters it.
    if (!decoder.decodeNow || input.refused) return false;
    if (!this.#current(intake, epoch)) return true;
    if (input.value === null) {
      let partnerId: string | undefined;
      try {
        partnerId = input.key && decoder.decodeKeyNow ? decoder.decodeKeyNow(input.key) : keyText(input.key);
      } catch (error) {
        this.#reject(input, 'decode', error, epoch);
        return true;
      }
      if (partnerId === undefined) return false;
      this.#tombstone(input, partnerId, epoch);
      return true;
    }
    let partner: PartnerRecord | undefined;
    try {
      partner = decoder.decodeNow(input.value);
    } catch (error) {
      this.#reject(input, 'decode', error, epoch);
      return true;
    }
    if (!partner) return false;
    this.#accept(input, partner, epoch);
    return true;
  }

  #tombstone(input: InputRecord, partnerId: string, epoch: number): void {
    if (!partnerId) {
      const error = new MappingError('MAPPING_MISSING_PARTNER_ID', 'tombstone without a key');
      return this.#parts.reject(input, 'mapping', error, epoch);
    }
    this.#parts.schedule(work(partnerId, 'delete', input, epoch));
  }

  #accept(input: InputRecord, partner: PartnerRecord, epoch: number): void {
    if (this.#options.checkKeys) this.#checkKey(input, partner.partnerId);
    let task: LookupTask;
    try {
      task = this.#parts.toTask(partner);
    } catch (error) {
      return this.#reject(input, 'mapping', error, epoch);
    }
    const lookup = work(partner.partnerId, 'lookup', input, epoch, partner);
    lookup.jsonRecord = task.jsonRecord;
    lookup.hash = task.hash;
    if (task.earlierHash !== undefined) lookup.earlierHash = task.earlierHash;
    // A Kafka position never changes content: a record found in a submission was part of it,
    // perhaps coalesced into a newer version's task (whose result it then gets, as before).
    const submitted = this.#parts.ledger.find(input.position);
    if (submitted) lookup.resumeFrom = submitted;
    this.#parts.schedule(lookup);
  }

  /**
   * The partition a record lands on is its key's: a key that is not its partner id (none, or
   * another id of the upstream's) lets the partner's records spread over partitions, each
   * with a partner state of its own. Reported, not refused: the record itself is valid.
   */
  #checkKey(input: InputRecord, partnerId: string): void {
    const { key } = input;
    if (key === null) this.#parts.observer.keyNotPartnerId?.(input.position, true);
    else if (partnerIdOfKey(key) !== partnerId) this.#parts.observer.keyNotPartnerId?.(input.position, false);
  }

  /**
   * A coded failure dead-letters the record; a fatal one (the registry refusing the
   * credentials) or anything else (a bug) fails the pipeline.
   */
  #reject(input: InputRecord, stage: FailureStage, error: unknown, epoch: number): void {
    if (isPartnerEnrichError(error) && !isFatal(error)) this.#parts.reject(input, stage, error, epoch);
    else this.#parts.fail(error as Error);
  }

  /** The partner id a tombstone's key names (its schema, for a key in the wire format, fetched as a value's is). */
  async #partnerIdOfKey(key: Buffer | null, intake: PartitionIntake, epoch: number): Promise<string> {
    const { decoder } = this.#parts;
    const { decodeKey } = decoder;
    if (!key || !decodeKey) return keyText(key);
    return this.#awaitRegistry(() => decodeKey.call(decoder, key), intake, epoch);
  }

  /**
   * The schema registry being away is no reason to dead-letter a record: the partition
   * waits for it (paused, reported by readiness) for as long as it takes. Only what can be
   * retried is waited for: a registry refusing the credentials fails the pipeline at once.
   */
  async #awaitRegistry<T>(read: () => Promise<T>, intake: PartitionIntake, epoch: number): Promise<T> {
    const { flow, observer } = this.#parts;
    for (let attempt = 1; ; attempt += 1) {
      try {
        const result = await read();
        if (intake.waitingForRegistry) {
          intake.waitingForRegistry = false;
          flow.resume('schema-registry', intake.ref);
        }
        return result;
      } catch (error) {
        if (!isPartnerEnrichError(error) || !error.canRetry || !this.#current(intake, epoch)) throw error;
        if (!intake.waitingForRegistry) {
          intake.waitingForRegistry = true;
          flow.pause('schema-registry', intake.ref);
        }
        observer.retry?.(error.code, attempt);
        await sleep(backoffDelay(attempt, this.#options.registryBackoff));
      }
    }
  }
}

/** A tombstone's key as text; no key names no partner (dead-lettered by #tombstone). */
const keyText = (key: Buffer | null): string => key?.toString('utf8') ?? '';

const keyOf = (ref: PartitionRef): string => positionKey(ref);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function work(
  partnerId: string,
  kind: PartnerWork['kind'],
  input: InputRecord,
  epoch: number,
  partner?: PartnerRecord,
): PartnerWork {
  return {
    id: nextWorkId(),
    partnerId,
    kind,
    records: [partner ? { input, partner } : { input }],
    state: 'scheduled',
    attempts: 0,
    epoch,
  };
}
