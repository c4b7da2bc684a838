// An NDJSON file as a record source: one PartnerRecord JSON object per line, in one
// partition whose offsets are line numbers. A line `{"partnerId": "...", "deleted": true}`
// is a tombstone, as a null value is on Kafka.
import { isUtf8 } from 'node:buffer';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Committable } from '../pipeline/commit-watermark.ts';
import type { RecordSource, SourceHandler } from '../pipeline/ports.ts';
import type { InputRecord } from '../pipeline/records.ts';
import { withoutBom } from '../serde/utf8.ts';
import { fileError, FilesError } from './errors.ts';

const LF = 0x0a;
const CR = 0x0d;
/**
 * UTF-8's byte order mark, which Notepad and PowerShell write at the start of a UTF-8 file:
 * no part of the first record (JSON.parse refuses it, the record was dead-lettered NOT_JSON).
 */
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * How much of a line over the record size limit its dead letter keeps: enough to tell what the
 * line is (its partnerId, a blob, records run together), bounded whatever the line's size.
 */
const OVERSIZED_START_BYTES = 1024;

interface FileLine {
  number: number;
  bytes: Buffer;
  /** Only on a line over the record size limit: its length in bytes, `bytes` being its start. */
  length?: number;
}

/**
 * The first bytes of a line without a character cut in two at their end, so that a line of
 * text keeps a start that is text too (the dead-letter file shows it as such, not as base64).
 */
function textStart(bytes: Buffer): Buffer {
  for (let cut = 0; cut < 4; cut += 1) {
    const start = bytes.subarray(0, bytes.length - cut);
    if (isUtf8(start)) return start;
  }
  return bytes;
}

/**
 * The file's lines as they are in it, bytes and not text: a line decoded to a string would
 * have its invalid UTF-8 turned into U+FFFD without a word, and the record would be looked up
 * with characters nobody wrote; as bytes it reaches the decoder, which dead-letters it
 * DECODE_INVALID_UTF8 with its bytes. Lines end as readline ends them (LF, CRLF or a lone
 * CR), so that a line's number, its offset, stays what it was. Numbered from 1; streamed, so a
 * file of any size is read in constant memory. A line is kept up to `maxBytes`: past them
 * only its first OVERSIZED_START_BYTES and its length are (a 50 MB line held whole, then
 * decoded, parsed and written as a dead letter, took the demo to 551 MB RSS). A byte order
 * mark at the start of the file is skipped.
 */
async function* fileLines(path: string, maxBytes: number): AsyncGenerator<FileLine> {
  let number = 0;
  /** The line so far, while it is within maxBytes. */
  let pending: Buffer[] = [];
  let pendingLength = 0;
  /** The line so far once it is over maxBytes: its start and its length. */
  let oversized: { start: Buffer; length: number } | undefined;
  const add = (piece: Buffer) => {
    if (!oversized && pendingLength + piece.length <= maxBytes) {
      pending.push(piece);
      pendingLength += piece.length;
      return;
    }
    if (!oversized) {
      const start = Buffer.concat(pending, Math.min(OVERSIZED_START_BYTES, pendingLength));
      oversized = { start, length: pendingLength };
      pending = [];
      pendingLength = 0;
    }
    // A copy of the line's first bytes only: its chunks are let go.
    const { start } = oversized;
    if (start.length < OVERSIZED_START_BYTES) {
      const kept = Math.min(OVERSIZED_START_BYTES, start.length + piece.length);
      oversized.start = Buffer.concat([start, piece], kept);
    }
    oversized.length += piece.length;
  };
  const line = (): FileLine => {
    number += 1;
    const read: FileLine = oversized
      ? { number, bytes: textStart(oversized.start), length: oversized.length }
      : // A copy: a subarray would keep the whole chunk alive while its record is in flight.
        { number, bytes: Buffer.concat(pending, pendingLength) };
    pending = [];
    pendingLength = 0;
    oversized = undefined;
    return read;
  };
  /** The last line ended with a CR: an LF right after it ends nothing more. */
  let afterCr = false;
  let first = true;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    let start = 0;
    // The first chunk is the whole file or 64 KiB: a byte order mark is whole in it.
    if (first && chunk.subarray(0, BOM.length).equals(BOM)) start = BOM.length;
    first = false;
    if (afterCr && chunk[0] === LF) start = 1;
    afterCr = false;
    for (let end = start; end < chunk.length; end += 1) {
      const byte = chunk[end];
      if (byte !== LF && byte !== CR) continue;
      add(chunk.subarray(start, end));
      yield line();
      if (byte === CR) {
        if (chunk[end + 1] === LF) end += 1;
        else if (end + 1 === chunk.length) afterCr = true;
      }
      start = end + 1;
    }
    if (start < chunk.length) add(chunk.subarray(start));
  }
  if (pendingLength > 0 || oversized) yield line();
}

/** ASCII whitespace, as String#trim removes it. */
const isSpace = (byte: number) => byte === 0x20 || (byte >= 0x09 && byte <= 0x0d);

/** A line of whitespace only (String#trim's: Unicode spaces too) is no record. */
function isBlank(bytes: Buffer): boolean {
  for (const byte of bytes) {
    if (isSpace(byte)) continue;
    // Not ASCII: a Unicode space perhaps (rare), decided on the text.
    return byte >= 0x80 && bytes.toString('utf8').trim() === '';
  }
  return true;
}

/** A line over the size limit is a record whatever it holds: what it holds was not kept. */
const isRecord = (line: FileLine): boolean => line.length !== undefined || !isBlank(line.bytes);

function tombstoneKey(line: Buffer): string | undefined {
  // A line of files concatenated may start with a byte order mark of its own.
  const bytes = withoutBom(line);
  // Invalid UTF-8 is no tombstone: the decoder dead-letters it with its bytes.
  if (!bytes.includes('"deleted"') || !isUtf8(bytes)) return undefined;
  try {
    const parsed = JSON.parse(bytes.toString('utf8')) as { partnerId?: unknown; deleted?: unknown };
    return parsed.deleted === true && typeof parsed.partnerId === 'string' ? parsed.partnerId : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Records (non-blank lines) in the file, undefined when it is no regular file (a named pipe,
 * /dev/stdin): its lines can be read once only, and counting them first used them up (the
 * source then read none, or waited for good for a writer). FILE_INPUT_UNREADABLE when it
 * cannot be read.
 */
export async function countRecords(path: string, maxRecordBytes: number): Promise<number | undefined> {
  let count = 0;
  try {
    const file = await stat(path);
    // A directory is read, to fail as one (EISDIR).
    if (!file.isFile() && !file.isDirectory()) return undefined;
    // Streamed as the source reads it: a file too large for one string is counted too.
    for await (const line of fileLines(path, maxRecordBytes)) if (isRecord(line)) count += 1;
  } catch (error) {
    throw fileError('FILE_INPUT_UNREADABLE', 'input file', path, error);
  }
  return count;
}

export class NdjsonSource implements RecordSource {
  readonly #path: string;
  readonly #maxRecordBytes: number;
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

  /** `maxRecordBytes`: files.maxRecordBytes, the longest line read as a record. */
  constructor(path: string, maxRecordBytes: number) {
    this.#path = path;
    this.#maxRecordBytes = maxRecordBytes;
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
    const lines = fileLines(this.#path, this.#maxRecordBytes);
    try {
      for await (const line of lines) {
        if (!isRecord(line)) continue;
        const { number, bytes, length } = line;
        const deleted = length === undefined ? tombstoneKey(bytes) : undefined;
        const record: InputRecord = {
          position: { topic: this.#path, partition: 0, offset: number },
          key: deleted === undefined ? null : Buffer.from(deleted),
          value: deleted === undefined ? bytes : null,
          headers: {},
          timestamp: Date.now(),
          ...(length === undefined ? {} : { refused: this.#tooLarge(number, length, bytes.length) }),
        };
        // A record the pipeline did not take (intake full) is offered again once it resumes.
        for (;;) {
          while (this.#paused && !this.#stopped) await new Promise<void>((resolve) => (this.#wake = resolve));
          if (this.#stopped || handler.offer(record)) break;
          this.#paused = true;
        }
        if (this.#stopped) break;
      }
    } catch (error) {
      throw fileError('FILE_INPUT_UNREADABLE', 'input file', this.#path, error);
    } finally {
      // Closes the file when the loop ended early (stopped).
      await lines.return(undefined);
    }
  }

  #tooLarge(line: number, length: number, kept: number): FilesError {
    const where = `line ${line} of ${this.#path}`;
    return new FilesError(
      'FILE_RECORD_TOO_LARGE',
      `${where} is ${length} bytes, over files.maxRecordBytes (${this.#maxRecordBytes}): read to its end ` +
        `without being kept; the dead letter holds its first ${kept} bytes, the whole record is still ${where}`,
      { details: { path: this.#path, line, bytes: length, maxRecordBytes: this.#maxRecordBytes } },
    );
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
