// Pausing the source, for reasons that hold for every partition (quota, backpressure) or
// for one (its records wait on the schema registry, its state is not yet restored). A
// partition is fetched while no reason holds for it; nothing is buffered meanwhile.
//
// Except for a moment when the quota runs out: the source is paused for the quota only once
// it has been out for as long as the source takes to fetch again after a resume. A shorter
// pause cost more than it saved: the window reset (a rerun beside live work takes each
// window's tail) and the records that came meanwhile still waited the source's whole fetch
// wait (Kafka: 250 ms). Records taken meanwhile wait for the quota in the pipeline, within
// batching.maxInFlightRecords as always.
import { positionKey } from './records.ts';
import type { PartitionRef, PipelineObserver, RecordSource } from './ports.ts';

export type PauseReason = 'quota' | 'backpressure' | 'schema-registry' | 'restoring';

export class FlowControl {
  readonly #source: RecordSource;
  readonly #observer: PipelineObserver;
  readonly #global = new Set<PauseReason>();
  /** The quota pause while it is not yet in force at the source. */
  #quotaGrace: NodeJS.Timeout | undefined;
  readonly #partitions = new Map<
    string,
    { ref: PartitionRef; reasons: Set<PauseReason>; paused?: boolean }
  >();

  constructor(source: RecordSource, observer: PipelineObserver) {
    this.#source = source;
    this.#observer = observer;
  }

  /** Reasons that hold now, for readiness and logs. */
  get reasons(): PauseReason[] {
    const all = new Set(this.#global);
    for (const { reasons } of this.#partitions.values()) for (const r of reasons) all.add(r);
    return [...all];
  }

  assigned(partitions: PartitionRef[]): void {
    for (const ref of partitions) {
      const key = positionKey(ref);
      // Unknown state on purpose: the first apply tells the source either way, whatever it
      // remembers from an earlier assignment.
      if (!this.#partitions.has(key)) this.#partitions.set(key, { ref, reasons: new Set() });
    }
    this.#apply();
  }

  revoked(partitions: PartitionRef[]): void {
    const before = this.reasons;
    for (const ref of partitions) this.#partitions.delete(positionKey(ref));
    // A reason only revoked partitions held ends with them: said, as any resume is, or
    // intake stayed paused in the metrics and the logs while everything was fetched.
    const after = this.reasons;
    for (const reason of before) if (!after.includes(reason)) this.#observer.intakeResumed?.(reason);
  }

  pause(reason: PauseReason, partition?: PartitionRef): void {
    const reasons = partition ? this.#slot(partition)?.reasons : this.#global;
    if (!reasons || reasons.has(reason)) return;
    if (!this.reasons.includes(reason)) this.#observer.intakePaused?.(reason);
    reasons.add(reason);
    const graceMs = this.#source.resumeDelayMs ?? 0;
    if (reason === 'quota' && !partition && graceMs > 0) {
      this.#quotaGrace = setTimeout(() => {
        this.#quotaGrace = undefined;
        this.#apply();
      }, graceMs).unref();
      return;
    }
    this.#apply();
  }

  resume(reason: PauseReason, partition?: PartitionRef): void {
    const reasons = partition ? this.#slot(partition)?.reasons : this.#global;
    if (!reasons?.delete(reason)) return;
    if (reason === 'quota' && !partition) {
      clearTimeout(this.#quotaGrace);
      this.#quotaGrace = undefined;
    }
    if (!this.reasons.includes(reason)) this.#observer.intakeResumed?.(reason);
    this.#apply();
  }

  /** Whether a reason for every partition is in force at the source (the quota's, once its grace ended). */
  #globalInForce(): boolean {
    for (const reason of this.#global) if (reason !== 'quota' || !this.#quotaGrace) return true;
    return false;
  }

  #slot(partition: PartitionRef) {
    return this.#partitions.get(positionKey(partition));
  }

  #apply(): void {
    const pause: PartitionRef[] = [];
    const resume: PartitionRef[] = [];
    for (const slot of this.#partitions.values()) {
      const paused = this.#globalInForce() || slot.reasons.size > 0;
      if (paused === slot.paused) continue;
      slot.paused = paused;
      (paused ? pause : resume).push(slot.ref);
    }
    if (pause.length > 0) this.#source.pause(pause);
    if (resume.length > 0) this.#source.resume(resume);
  }
}
