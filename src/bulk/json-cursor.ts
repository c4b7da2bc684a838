// Reads the members it is asked for out of a JSON text and steps over the rest without
// building them. A bulk's result page is about 2 KB per task, most of it business partner
// documents the outputs never carry; JSON.parse built all of it (12-13 µs per task on this
// machine, and 3 MB of short-lived objects per 1 MB page), this reads what the outputs use
// in 5-6 µs (docs/BENCHMARKS.md, "Result pages read as they are parsed").
//
// What is read goes through JSON.parse (a string with escapes, a number, a small object), so
// its values are exactly what JSON.parse gives. What is stepped over is checked for balanced
// brackets, terminated strings and well-formed literals only.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

const LITERAL = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)$/;

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

export class JsonCursor {
  readonly #text: string;
  #at = 0;

  constructor(text: string) {
    this.#text = text;
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
      const key = this.#string();
      this.#expect(COLON, "':'");
      member(key);
      if (this.#next([COMMA, CLOSE_OBJECT], "',' or '}'") === CLOSE_OBJECT) return;
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
      if (this.#next([COMMA, CLOSE_ARRAY], "',' or ']'") === CLOSE_ARRAY) return;
    }
  }

  /** The member name here (escapes decoded), a string of its own (see raw()). */
  #string(): string {
    if (this.#peek() !== QUOTE) this.#fail('a string');
    const start = this.#at;
    this.#at = this.#stringEnd(start);
    return JSON.parse(this.#text.slice(start, this.#at)) as string;
  }

  /** The value here, whatever it is, as JSON.parse gives it. */
  value(): unknown {
    const start = this.#skip();
    return JSON.parse(this.#text.slice(start, this.#at));
  }

  /**
   * The text of the value here, as a string of its own. V8 keeps a slice of 13 characters or
   * more as a view into the whole text, so a golden record kept until its MatchResult is
   * written would hold its page's megabyte; a concatenation, sliced, is flattened into a copy.
   */
  raw(): string {
    const start = this.#skip();
    return (this.#text.slice(start, this.#at) + ' ').slice(0, -1);
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
    const text = this.#text;
    const c = this.#peek();
    const start = this.#at;
    if (c === QUOTE) {
      this.#at = this.#stringEnd(start);
      return start;
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      const closers: number[] = [];
      for (let i = start; i < text.length;) {
        const code = text.charCodeAt(i);
        if (code === QUOTE) {
          i = this.#stringEnd(i);
          continue;
        }
        if (code === OPEN_OBJECT) closers.push(CLOSE_OBJECT);
        else if (code === OPEN_ARRAY) closers.push(CLOSE_ARRAY);
        else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
          if (closers.pop() !== code) this.#fail('a matching bracket', i);
          if (closers.length === 0) {
            this.#at = i + 1;
            return start;
          }
        }
        i += 1;
      }
      this.#fail('a closing bracket', text.length);
    }
    let end = start;
    while (end < text.length) {
      const code = text.charCodeAt(end);
      if (code === COMMA || code === CLOSE_OBJECT || code === CLOSE_ARRAY || isSpace(code)) break;
      end += 1;
    }
    if (!LITERAL.test(text.slice(start, end))) this.#fail('a value');
    this.#at = end;
    return start;
  }

  /** Where the string starting at `start` ends, its closing quote included. */
  #stringEnd(start: number): number {
    const text = this.#text;
    for (let from = start + 1; ;) {
      const quote = text.indexOf('"', from);
      if (quote < 0) this.#fail('the end of a string', text.length);
      let backslashes = 0;
      while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes += 1;
      if (backslashes % 2 === 0) return quote + 1;
      from = quote + 1;
    }
  }

  /** The next character that is not white space, where the cursor then stands; undefined at the end. */
  #peek(): number | undefined {
    const text = this.#text;
    while (this.#at < text.length && isSpace(text.charCodeAt(this.#at))) this.#at += 1;
    return this.#at < text.length ? text.charCodeAt(this.#at) : undefined;
  }

  #null(): boolean {
    if (this.#peek() !== 0x6e || !this.#text.startsWith('null', this.#at)) return false;
    this.#at += 4;
    return true;
  }

  #expect(code: number, what: string): void {
    if (this.#peek() !== code) this.#fail(what);
    this.#at += 1;
  }

  #next(codes: number[], what: string): number {
    const code = this.#peek();
    if (code === undefined || !codes.includes(code)) this.#fail(what);
    this.#at += 1;
    return code;
  }

  #fail(what: string, at = this.#at): never {
    throw new SyntaxError(`JSON: expected ${what} at position ${at}`);
  }
}
