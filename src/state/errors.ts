import { PartnerEnrichError, type ErrorOptions } from '../errors.ts';

export const STATE_ERROR_CODES = [
  /**
   * At start: the storage topic (the partner state's changelog) has a different number of
   * partitions than the input topic; each input partition's state lives in the storage
   * partition of the same number. details: input, storage, inputPartitions, storagePartitions.
   * While running: a partition of the input topic beyond the storage topic's was assigned (the
   * input topic's partitions were increased); the pipeline stops before processing it.
   * details: input, storage, partition, storagePartitions.
   */
  'STATE_NOT_COPARTITIONED',
  /**
   * At start: another running process holds `state.dir`'s lock (the kernel's, on LOCK.db: of
   * any pid namespace), or has a file of the directory open when LOCK.db was deleted.
   * details: dir, and pid (the holder, seen from here) or lockPid (what LOCK names).
   */
  'STATE_DIR_LOCKED',
  /**
   * At start: `state.dir` cannot be created or its lock file written (a path through a file,
   * no permission, a read-only or full filesystem). details: dir, systemCode.
   */
  'STATE_DIR_UNUSABLE',
  /**
   * A partition's state could not be opened or restored from the storage topic (the disk,
   * or Kafka beyond its client's retries): the pipeline stops, its supervisor restarts it.
   */
  'STATE_RESTORE_FAILED',
  /**
   * The pipeline's writes to a partition's state file failed (the disk full, the file or its
   * directory unwritable), its checkpoints included: the state no longer reflects the storage
   * topic, the pipeline stops at once, its supervisor restarts it. details: path.
   */
  'STATE_FILE_WRITE_FAILED',
] as const;

export type StateErrorCode = (typeof STATE_ERROR_CODES)[number];

export class StateError extends PartnerEnrichError<StateErrorCode> {
  constructor(code: StateErrorCode, message: string, options?: ErrorOptions) {
    super(code, message, { ...options, canRetry: false });
  }
}
