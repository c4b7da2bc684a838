// An NDJSON file as a record source: one PartnerRecord JSON object per line, in one
// partition whose offsets are line numbers. A line `{"partnerId": "...", "deleted": true}`
// is a tombstone, as a null value is on Kafka.
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { Committable } from '../pipeline/commit-watermark.ts';
import type { RecordSource, SourceHandler } from '../pipeline/ports.ts';
import type { InputRecord } from '../pipeline/records.ts';
import { fileError } from './errors.ts';

function tombstoneKey(line: string): string | undefined {
  if (!line.includes('"deleted"')) return undefined;
  try {
    const parsed = JSON.parse(line) as { partnerId?: unknown; deleted?: unknown };
    return parsed.deleted === true && typeof parsed.partnerId === 'string' ? parsed.partnerId : undefined;
  } catch {
    return undefined;
  }
}

/** Records (non-blank lines) in the file: FILE_INPUT_UNREADABLE when it cannot be read. */
export async function countRecords(path: string): Promise<number> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw fileError('FILE_INPUT_UNREADABLE', 'input file', path, error);
  }
  return text.split('\n').filter((line) => line.trim()).length;
}

export class NdjsonSource implements RecordSource {
  readonly #path: string;
  #paused = false;
  #stopped = false;
  #wake: (() => void) | undefined;
  #committed = 0;
  #resolveDrained!: () => void;
  #rejectDrained!: (error: Error) => void;
  readonly drained = new Promise<void>((resolve, reject) => {
    this.#resolveDrained = resolve;
    this.#rejectDrained = reject;
  });

  constructor(path: string) {
    this.#path = path;
  }

  /** Line number up to which (exclusive) every record is finished. */
  get committedLine(): number {
    return this.#committed;
  }

  async start(handler: SourceHandler): Promise<void> {
    handler.assigned([{ topic: this.#path, partition: 0 }]);
    void this.#read(handler).then(this.#resolveDrained, this.#rejectDrained);
  }

  async #read(handler: SourceHandler): Promise<void> {
    const lines = createInterface({ input: createReadStream(this.#path), crlfDelay: Infinity });
    let lineNumber = 0;
    for await (const line of lines) {
      lineNumber += 1;
      if (line.trim() === '') continue;
      const deleted = tombstoneKey(line);
      const record: InputRecord = {
        position: { topic: this.#path, partition: 0, offset: lineNumber },
        key: deleted === undefined ? null : Buffer.from(deleted),
        value: deleted === undefined ? Buffer.from(line) : null,
        headers: {},
        timestamp: Date.now(),
      };
      // A record the pipeline did not take (intake full) is offered again once it resumes.
      for (;;) {
        while (this.#paused && !this.#stopped) await new Promise<void>((resolve) => (this.#wake = resolve));
        if (this.#stopped || handler.offer(record)) break;
        this.#paused = true;
      }
      if (this.#stopped) break;
    }
    lines.close();
  }

  pause(): void {
    this.#paused = true;
  }

  resume(): void {
    this.#paused = false;
    this.#wake?.();
  }

  async commit(positions: Committable[]): Promise<void> {
    for (const position of positions) this.#committed = Math.max(this.#committed, position.offset);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#wake?.();
  }

  async close(): Promise<void> {
    await this.stop();
  }
}
