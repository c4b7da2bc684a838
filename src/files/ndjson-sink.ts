// Outputs as NDJSON files in one folder: matches.ndjson, events.ndjson,
// storage.ndjson and dead-letters.ndjson. A write counts as done once the operating
// system has it; a tombstone is written as `{"partnerId": "...", "deleted": true}`.
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { OutputMessage, OutputName } from '../pipeline/outputs.ts';
import { fileError } from './errors.ts';
import type { OutputSink } from '../pipeline/ports.ts';

export const OUTPUT_FILES: Record<OutputName, string> = {
  matches: 'matches.ndjson',
  events: 'events.ndjson',
  storage: 'storage.ndjson',
  deadLetters: 'dead-letters.ndjson',
};

const asText = (value: string | Buffer | null): string | null =>
  value === null ? null : Buffer.isBuffer(value) ? value.toString('utf8') : value;

/** Dead letters keep the original bytes: as text when they are valid UTF-8, else base64. */
function deadLetterLine(message: OutputMessage): object {
  const value = message.value as Buffer | null;
  const utf8 = value !== null && Buffer.from(value.toString('utf8'), 'utf8').equals(value);
  return {
    key: asText(message.key as Buffer | string | null),
    value: value === null ? null : utf8 ? value.toString('utf8') : value.toString('base64'),
    valueEncoding: value === null || utf8 ? 'utf8' : 'base64',
    headers: Object.fromEntries(
      Object.entries(message.headers ?? {}).map(([name, value]) => [name, String(value)]),
    ),
  };
}

function line(message: OutputMessage): string {
  if (message.output === 'deadLetters') return JSON.stringify(deadLetterLine(message));
  if (message.value === null)
    return JSON.stringify({ partnerId: asText(message.key as string | Buffer | null), deleted: true });
  return JSON.stringify(message.value);
}

export class NdjsonSink implements OutputSink {
  readonly #dir: string;
  readonly #files = new Map<OutputName, Promise<FileHandle>>();
  /** Writes to one file are serialised so that lines never interleave. */
  readonly #tails = new Map<OutputName, Promise<void>>();

  constructor(dir: string) {
    this.#dir = dir;
  }

  static async create(dir: string): Promise<NdjsonSink> {
    const sink = new NdjsonSink(dir);
    try {
      await mkdir(dir, { recursive: true });
      // Each run writes fresh files: outputs of an earlier run are replaced, not appended to.
      for (const output of Object.keys(OUTPUT_FILES) as OutputName[]) {
        sink.#files.set(output, open(join(dir, OUTPUT_FILES[output]), 'w'));
      }
      await Promise.all(sink.#files.values());
    } catch (error) {
      await sink.close().catch(() => {});
      throw fileError('FILE_OUTPUT_UNWRITABLE', 'output directory', dir, error);
    }
    return sink;
  }

  async send(messages: OutputMessage[]): Promise<void> {
    const byOutput = new Map<OutputName, string[]>();
    for (const message of messages) {
      const lines = byOutput.get(message.output) ?? [];
      lines.push(line(message));
      byOutput.set(message.output, lines);
    }
    await Promise.all(
      [...byOutput].map(([output, lines]) => {
        const file = this.#files.get(output) as Promise<FileHandle>;
        const tail = (this.#tails.get(output) ?? Promise.resolve()).then(async () => {
          await (await file).write(`${lines.join('\n')}\n`);
        });
        this.#tails.set(output, tail);
        return tail;
      }),
    );
  }

  async close(): Promise<void> {
    await Promise.all(this.#tails.values());
    await Promise.all([...this.#files.values()].map(async (file) => (await file).close()));
  }

  get directory(): string {
    return this.#dir;
  }
}
