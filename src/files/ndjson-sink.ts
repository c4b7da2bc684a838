// Outputs as NDJSON files in one folder: matches.ndjson, events.ndjson,
// storage.ndjson and dead-letters.ndjson. A write counts as done once the operating
// system has it; a tombstone is written as `{"partnerId": "...", "deleted": true}`.
import { mkdir, open, realpath, stat, type FileHandle } from 'node:fs/promises';
import { join, relative, isAbsolute } from 'node:path';
import type { OutputMessage, OutputName } from '../pipeline/outputs.ts';
import { fileError, FilesError } from './errors.ts';
import type { OutputSink } from '../pipeline/ports.ts';

export const OUTPUT_FILES: Record<OutputName, string> = {
  matches: 'matches.ndjson',
  events: 'events.ndjson',
  storage: 'storage.ndjson',
  deadLetters: 'dead-letters.ndjson',
};

/**
 * FILE_INPUT_IS_OUTPUT when `input` is one of the files a run in `dir` truncates (its outputs)
 * or under a folder it removes (`cleared`, the state): a previous run's dead-letters.ndjson
 * given back as the input was emptied before a line of it was read, and the run ended with
 * exit 0, nothing read, the records gone. Compared as the files they are (device and inode,
 * real paths), not by name: a relative path, a link or a hard link is the same file. An input
 * that does not exist is no output; reading it reports it.
 */
export async function checkInputNotOutput(input: string, dir: string, cleared: string[]): Promise<void> {
  const file = await stat(input).catch(() => undefined);
  if (!file) return;
  const refuse = (output: string) =>
    new FilesError(
      'FILE_INPUT_IS_OUTPUT',
      `input file ${input} is in the output directory ${dir} (${output}), which the run replaces: ` +
        'copy it elsewhere or choose another output directory',
      { details: { path: input, output } },
    );
  for (const name of Object.values(OUTPUT_FILES)) {
    const output = join(dir, name);
    const existing = await stat(output).catch(() => undefined);
    if (existing && existing.dev === file.dev && existing.ino === file.ino) throw refuse(output);
  }
  // No real path (/dev/stdin of a pipe, `pipe:[...]`): nothing in a folder to be removed.
  const real = await realpath(input).catch(() => undefined);
  if (real === undefined) return;
  for (const folder of cleared) {
    const realFolder = await realpath(folder).catch(() => undefined);
    if (realFolder === undefined) continue;
    const inside = relative(realFolder, real);
    if (!inside.startsWith('..') && !isAbsolute(inside)) throw refuse(folder);
  }
}

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
        const path = join(this.#dir, OUTPUT_FILES[output]);
        const tail = (this.#tails.get(output) ?? Promise.resolve()).then(async () => {
          try {
            // writeFile writes on until every byte is written: a write past a file size limit
            // (or the disk's last blocks) writes part and reports no error, which write() took
            // for the whole batch, and a run ending on it left a torn last line with exit 0.
            await (await file).writeFile(`${lines.join('\n')}\n`);
          } catch (error) {
            // The system's refusal (ENOSPC, EIO...) with the file's name and the product's code:
            // bare, it ended the demo as an unexpected failure with a stack.
            throw fileError('FILE_OUTPUT_UNWRITABLE', 'output file', path, error);
          }
        });
        this.#tails.set(output, tail);
        return tail;
      }),
    );
  }

  async close(): Promise<void> {
    // A failed write was reported to its sender (the pipeline fails on it): closing waits for
    // the writes to end, it does not report that failure again in place of the pipeline's.
    await Promise.allSettled(this.#tails.values());
    await Promise.all([...this.#files.values()].map(async (file) => (await file).close()));
  }

  get directory(): string {
    return this.#dir;
  }
}
