// Pausing the source, for reasons that hold for every partition (quota, backpressure) or
// for one (its records wait on the schema registry, its state is not yet restored). A
// partition is fetched while no reason holds for it; nothing is buffered meanwhile.
import { positionKey } from './records.ts';
import type { PartitionRef, PipelineObserver, RecordSource } from './ports.ts';

export type PauseReason = 'quota' | 'backpressure' | 'schema-registry' | 'restoring';

export class FlowControl {
  readonly #source: RecordSource;
  readonly #observer: PipelineObserver;
  readonly #global = new Set<PauseReason>();
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
    for (const ref of partitions) this.#partitions.delete(positionKey(ref));
  }

  pause(reason: PauseReason, partition?: PartitionRef): void {
    const reasons = partition ? this.#slot(partition)?.reasons : this.#global;
    if (!reasons || reasons.has(reason)) return;
    if (!this.reasons.includes(reason)) this.#observer.intakePaused?.(reason);
    reasons.add(reason);
    this.#apply();
  }

  resume(reason: PauseReason, partition?: PartitionRef): void {
    const reasons = partition ? this.#slot(partition)?.reasons : this.#global;
    if (!reasons?.delete(reason)) return;
    if (!this.reasons.includes(reason)) this.#observer.intakeResumed?.(reason);
    this.#apply();
  }

  #slot(partition: PartitionRef) {
    return this.#partitions.get(positionKey(partition));
  }

  #apply(): void {
    const pause: PartitionRef[] = [];
    const resume: PartitionRef[] = [];
    for (const slot of this.#partitions.values()) {
      const paused = this.#global.size > 0 || slot.reasons.size > 0;
      if (paused === slot.paused) continue;
      slot.paused = paused;
      (paused ? pause : resume).push(slot.ref);
    }
    if (pause.length > 0) this.#source.pause(pause);
    if (resume.length > 0) this.#source.resume(resume);
  }
}
