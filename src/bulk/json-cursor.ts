// Reads the members it is asked for out of a JSON document's bytes and steps over the rest
// without building them. A bulk's result page is about 2 KB per task, most of it business
// partner documents the outputs never carry: decoded and built by JSON.parse, a real 500-task
// page cost 13 µs per task on this machine (3 MB of short-lived objects per 1 MB page); read
// here, 8.5 µs (docs/BENCHMARKS.md, "Result pages read as they are parsed").
//
// It walks the UTF-8 bytes, not a decoded string: JSON's structure is ASCII and no byte of a
// multi-byte UTF-8 sequence is below 0x80, so brackets, quotes and commas are found in the bytes
// as they are. A page decoded whole is a megabyte string, alive while the page is read and
// promoted whole when a scavenge comes meanwhile (V8 allocates it in its young large-object
// space); only the spans read are decoded here, each a string of its own.
//
// What is read goes through JSON.parse (a string with escapes, a number, a small object), so
// its values are exactly what JSON.parse gives; raw() text, passed on as JSON, is checked as
// JSON.parse would check it. What is stepped over is checked for balanced brackets, terminated
// strings and well-formed literals only.

import {
  BACKSLASH,
  CLOSE_ARRAY,
  CLOSE_OBJECT,
  COLON,
  COMMA,
  OPEN_ARRAY,
  OPEN_OBJECT,
  QUOTE,
} from '../refdata/json-byte-codes.ts';

const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const KEYWORDS = ['true', 'false', 'null'];

const isDigit = (c: number | undefined) => c !== undefined && c >= ZERO && c <= 0x39;
const isHex = (c: number | undefined) =>
  c !== undefined && (isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66));
/** The characters after a backslash JSON knows, but u: " \ / b f n r t. */
const ESCAPED = new Set([QUOTE, BACKSLASH, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74]);

/**
 * Whether bytes[start, end) are a JSON number, true, false or null. Checked in the bytes: a
 * string per skipped number (tested by a regular expression) was a twentieth of the bytes a
 * drain allocated.
 */
function isLiteral(bytes: Buffer, start: number, end: number): boolean {
  for (const word of KEYWORDS) if (sameAscii(word, bytes, start, end)) return true;
  let i = start;
  if (bytes[i] === MINUS) i += 1;
  if (i >= end) return false;
  if (bytes[i] === ZERO) i += 1;
  else if (isDigit(bytes[i])) while (i < end && isDigit(bytes[i])) i += 1;
  else return false;
  if (i < end && bytes[i] === DOT) {
    i += 1;
    if (i >= end || !isDigit(bytes[i])) return false;
    while (i < end && isDigit(bytes[i])) i += 1;
  }
  if (i < end && (bytes[i] === 0x65 || bytes[i] === 0x45)) {
    i += 1;
    if (i < end && (bytes[i] === PLUS || bytes[i] === MINUS)) i += 1;
    if (i >= end || !isDigit(bytes[i])) return false;
    while (i < end && isDigit(bytes[i])) i += 1;
  }
  return i === end;
}

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** Member names met before, by a hash of their bytes; bounded against pages of made-up names. */
const NAMES = new Map<number, string>();
const MAX_NAMES = 4_096;

function sameAscii(name: string, bytes: Buffer, start: number, end: number): boolean {
  if (name.length !== end - start) return false;
  for (let i = 0; i < name.length; i += 1) if (name.charCodeAt(i) !== bytes[start + i]) return false;
  return true;
}

export class JsonCursor {
  readonly #bytes: Buffer;
  #at = 0;
  /** The closing brackets #skip expects, reused: one array per skipped value was garbage. */
  readonly #closers: number[] = [];

  constructor(bytes: Buffer) {
    this.#bytes = bytes;
  }

  /**
   * Calls `member` with each key of the object here; `member` reads or skips its value. A
   * null here is an object without members.
   */
  object(member: (key: string) => void): void {
    if (this.#null()) return;
    this.#expect(OPEN_OBJECT, 'an object');
    if (this.#peek() === CLOSE_OBJECT) {
      this.#at += 1;
      return;
    }
    for (;;) {
      if (this.#peek() !== QUOTE) this.#fail('a member name');
      const key = this.#name();
      this.#expect(COLON, "':'");
      member(key);
      if (this.#next(COMMA, CLOSE_OBJECT, "',' or '}'") === CLOSE_OBJECT) return;
    }
  }

  /** Calls `item` for each element of the array here; `item` reads or skips it. A null here is an empty array. */
  array(item: () => void): void {
    if (this.#null()) return;
    this.#expect(OPEN_ARRAY, 'an array');
    if (this.#peek() === CLOSE_ARRAY) {
      this.#at += 1;
      return;
    }
    for (;;) {
      item();
      if (this.#next(COMMA, CLOSE_ARRAY, "',' or ']'") === CLOSE_ARRAY) return;
    }
  }

  /** Whether an object starts here (object() also takes a null). */
  isObject(): boolean {
    return this.#peek() === OPEN_OBJECT;
  }

  /**
   * The member name here, escapes decoded. Pages repeat a few dozen names thousands of times:
   * a plain ASCII name is looked up by its bytes, not decoded again (each decode of a span is
   * a call into C++, which cost more than the scan).
   */
  #name(): string {
    if (this.#peek() !== QUOTE) this.#fail('a string');
    const bytes = this.#bytes;
    const start = this.#at;
    // #plainEnd's scan, hashing the name's bytes as it goes: a second pass cost 3-5 % of a page.
    let hash = 0;
    let end = start + 1;
    for (; end < bytes.length; end += 1) {
      const c = bytes[end] as number;
      if (c === QUOTE) break;
      if (c === BACKSLASH || c >= 0x80 || c < 0x20) return this.#decoded(start);
      hash = (Math.imul(hash, 31) + c) | 0;
    }
    if (end >= bytes.length) return this.#decoded(start);
    this.#at = end + 1;
    const known = NAMES.get(hash);
    if (known !== undefined && sameAscii(known, bytes, start + 1, end)) return known;
    const name = bytes.toString('latin1', start + 1, end);
    if (NAMES.size < MAX_NAMES) NAMES.set(hash, name);
    return name;
  }

  /** The value here, whatever it is, as JSON.parse gives it. */
  value(): unknown {
    const start = this.#skip();
    return JSON.parse(this.#bytes.toString('utf8', start, this.#at));
  }

  /** The number here, or null: what the outputs write as an Avro double must be one. */
  number(): number | null {
    if (this.#null()) return null;
    const at = this.#at;
    const value = this.value();
    if (typeof value !== 'number') {
      this.#at = at;
      this.#fail('a number');
    }
    return value;
  }

  /**
   * The string here, or null. A plain ASCII one (no escapes) is taken from the bytes as it is:
   * one string, where value() decodes the span and JSON.parse builds a second.
   */
  string(): string | null {
    if (this.#null()) return null;
    if (this.#peek() !== QUOTE) this.#fail('a string');
    const start = this.#at;
    const end = this.#plainEnd(start);
    if (end < 0) return this.#decoded(start);
    this.#at = end + 1;
    return this.#bytes.toString('latin1', start + 1, end);
  }

  /**
   * The text of the value here, as written, checked to be JSON: it is passed on as JSON (a
   * MatchResult's golden record), so what JSON.parse refuses must not get through. Checked in
   * the bytes, without building the value: JSON.parse of each golden record cost more than
   * reading the rest of its task.
   */
  raw(): string {
    this.#peek();
    const start = this.#at;
    this.#checked();
    return this.#bytes.toString('utf8', start, this.#at);
  }

  skip(): void {
    this.#skip();
  }

  /** Throws unless only white space is left. */
  end(): void {
    if (this.#peek() !== undefined) this.#fail('the end of the text');
  }

  /** Steps over the value here; returns where it starts. */
  #skip(): number {
    const bytes = this.#bytes;
    const c = this.#peek();
    const start = this.#at;
    if (c === QUOTE) {
      this.#at = this.#stringEnd(start);
      return start;
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      const closers = this.#closers;
      let depth = 0;
      for (let i = start; i < bytes.length;) {
        const code = bytes[i];
        if (code === QUOTE) {
          i = this.#stringEnd(i);
          continue;
        }
        if (code === OPEN_OBJECT) closers[depth++] = CLOSE_OBJECT;
        else if (code === OPEN_ARRAY) closers[depth++] = CLOSE_ARRAY;
        else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
          if (closers[--depth] !== code) this.#fail('a matching bracket', i);
          if (depth === 0) {
            this.#at = i + 1;
            return start;
          }
        }
        i += 1;
      }
      this.#fail('a closing bracket', bytes.length);
    }
    let end = start;
    while (end < bytes.length) {
      const code = bytes[end] as number;
      if (code === COMMA || code === CLOSE_OBJECT || code === CLOSE_ARRAY || isSpace(code)) break;
      end += 1;
    }
    if (!isLiteral(bytes, start, end)) this.#fail('a value');
    this.#at = end;
    return start;
  }

  /**
   * Steps over the value here as JSON.parse reads it, refusing what it refuses: separators,
   * member names, escapes and control characters inside containers too. Iterative, like #skip:
   * a deeply nested text cannot overflow the stack.
   */
  #checked(): void {
    const closers = this.#closers;
    let depth = 0;
    // What comes next: a value (or, first in an array, its end), a member name (or, first in
    // an object, its end), a colon, or what follows a value.
    let expect: 'value' | 'first-value' | 'name' | 'first-name' | 'colon' | 'after' = 'value';
    for (;;) {
      // Done at the end of the value, before any white space after it (not part of the text).
      if (expect === 'after' && depth === 0) return;
      const c = this.#peek();
      if (expect === 'after') {
        if (c === COMMA) expect = closers[depth - 1] === CLOSE_OBJECT ? 'name' : 'value';
        else if (c === closers[depth - 1]) depth -= 1;
        else this.#fail("',' or a closing bracket");
        this.#at += 1;
        continue;
      }
      if (expect === 'colon') {
        this.#expect(COLON, "':'");
        expect = 'value';
        continue;
      }
      if (
        (expect === 'first-value' && c === CLOSE_ARRAY) ||
        (expect === 'first-name' && c === CLOSE_OBJECT)
      ) {
        depth -= 1;
        this.#at += 1;
        expect = 'after';
        continue;
      }
      if (expect === 'name' || expect === 'first-name') {
        if (c !== QUOTE) this.#fail('a member name');
        this.#at = this.#checkedStringEnd(this.#at);
        expect = 'colon';
        continue;
      }
      if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
        closers[depth++] = c === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY;
        this.#at += 1;
        expect = c === OPEN_OBJECT ? 'first-name' : 'first-value';
        continue;
      }
      if (c === QUOTE) this.#at = this.#checkedStringEnd(this.#at);
      else this.#skip();
      expect = 'after';
    }
  }

  /** Where the string starting at `start` ends, refusing control characters and escapes JSON has not. */
  #checkedStringEnd(start: number): number {
    const bytes = this.#bytes;
    for (let i = start + 1; i < bytes.length;) {
      const c = bytes[i] as number;
      if (c === QUOTE) return i + 1;
      if (c < 0x20) this.#fail('a character of a string', i);
      if (c !== BACKSLASH) {
        i += 1;
        continue;
      }
      const escaped = bytes[i + 1];
      if (escaped === 0x75) {
        for (let h = i + 2; h < i + 6; h += 1) if (!isHex(bytes[h])) this.#fail('a \\u escape', i);
        i += 6;
      } else if (escaped !== undefined && ESCAPED.has(escaped)) i += 2;
      else this.#fail('an escape', i);
    }
    this.#fail('the end of a string', bytes.length);
  }

  /**
   * Where the string starting at `start` closes (its quote), when it is plain: ASCII without
   * escapes or control characters (which JSON.parse refuses); -1 for any other.
   */
  #plainEnd(start: number): number {
    const bytes = this.#bytes;
    for (let i = start + 1; i < bytes.length; i += 1) {
      const c = bytes[i] as number;
      if (c === QUOTE) return i;
      if (c === BACKSLASH || c >= 0x80 || c < 0x20) return -1;
    }
    return -1;
  }

  /** The string starting at `start`, decoded as JSON.parse decodes it; the cursor moves past it. */
  #decoded(start: number): string {
    this.#at = this.#stringEnd(start);
    // An escaped lone surrogate (`\ud800`) is no text: avsc wrote it into the outputs as bytes
    // that are not UTF-8 (for strings up to 64 bytes), read back as three U+FFFD.
    return (JSON.parse(this.#bytes.toString('utf8', start, this.#at)) as string).toWellFormed();
  }

  /** Where the string starting at `start` ends, its closing quote included. */
  #stringEnd(start: number): number {
    const bytes = this.#bytes;
    // A loop, not Buffer#indexOf: most strings are short, and each indexOf is a call into C++.
    for (let i = start + 1; i < bytes.length; i += 1) {
      const c = bytes[i];
      if (c === QUOTE) return i + 1;
      if (c === BACKSLASH) i += 1;
    }
    this.#fail('the end of a string', bytes.length);
  }

  /** The next byte that is not white space, where the cursor then stands; undefined at the end. */
  #peek(): number | undefined {
    const bytes = this.#bytes;
    while (this.#at < bytes.length && isSpace(bytes[this.#at] as number)) this.#at += 1;
    return bytes[this.#at];
  }

  #null(): boolean {
    if (this.#peek() !== 0x6e) return false;
    const bytes = this.#bytes;
    const at = this.#at;
    if (bytes[at + 1] !== 0x75 || bytes[at + 2] !== 0x6c || bytes[at + 3] !== 0x6c) return false;
    this.#at += 4;
    return true;
  }

  #expect(code: number, what: string): void {
    if (this.#peek() !== code) this.#fail(what);
    this.#at += 1;
  }

  #next(one: number, other: number, what: string): number {
    const code = this.#peek();
    if (code !== one && code !== other) this.#fail(what);
    this.#at += 1;
    return code;
  }

  #fail(what: string, at = this.#at): never {
    throw new SyntaxError(`JSON: expected ${what} at byte ${at}`);
  }
}
