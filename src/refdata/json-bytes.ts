// A request body's JSON as bytes. JSON.stringify of a 500-task bulk body is one string of
// 300-600 KB (two bytes per character once any character is beyond Latin-1) that lives as long
// as its request: long enough to outlive V8's young generation, so only a major GC frees it;
// and undici encodes it to bytes once more. Here the members of the body's objects and the
// items of its arrays are stringified one by one, each a small string the young generation
// collects, and written into one Buffer.

import { CLOSE_ARRAY, CLOSE_OBJECT, COMMA, OPEN_ARRAY, OPEN_OBJECT } from './json-byte-codes.ts';

/** Objects and arrays down to this depth are written member by member; deeper ones whole. */
const SPLIT_DEPTH = 2;

/** The buffer's first size; it doubles when a piece may not fit. */
const INITIAL_BYTES = 64 * 1024;

/** Whether JSON.stringify would write `value` member by member (no toJSON of its own). */
const isPlain = (value: unknown): value is Record<string, unknown> | unknown[] => {
  if (typeof value !== 'object' || value === null) return false;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return false;
  if (Array.isArray(value)) return true;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
};

/** The bytes of JSON.stringify(value), for a value JSON.stringify writes (not undefined). */
export function jsonBytes(value: unknown): Buffer {
  let bytes = Buffer.allocUnsafe(INITIAL_BYTES);
  let length = 0;
  const reserve = (most: number) => {
    if (length + most <= bytes.length) return;
    const larger = Buffer.allocUnsafe(Math.max(bytes.length * 2, length + most));
    bytes.copy(larger, 0, 0, length);
    bytes = larger;
  };
  // Three bytes per UTF-16 unit at most (a surrogate pair's two units take four).
  const add = (piece: string) => {
    reserve(piece.length * 3);
    length += bytes.write(piece, length);
  };
  // Brackets and commas as bytes: a write call each cost as much as a task's text.
  const addByte = (code: number) => {
    reserve(1);
    bytes[length] = code;
    length += 1;
  };
  /** Writes `item`; false, writing nothing, where JSON.stringify leaves it out (undefined, a function...). */
  const write = (item: unknown, depth: number): boolean => {
    if (depth >= SPLIT_DEPTH || !isPlain(item)) {
      const text = JSON.stringify(item) as string | undefined;
      if (text === undefined) return false;
      add(text);
      return true;
    }
    if (Array.isArray(item)) {
      addByte(OPEN_ARRAY);
      for (let i = 0; i < item.length; i += 1) {
        if (i > 0) addByte(COMMA);
        if (!write(item[i], depth + 1)) add('null');
      }
      addByte(CLOSE_ARRAY);
      return true;
    }
    addByte(OPEN_OBJECT);
    let comma = '';
    for (const key of Object.keys(item)) {
      const member = item[key];
      // Asked first: a member JSON.stringify leaves out must not leave its name behind.
      const text =
        depth + 1 >= SPLIT_DEPTH || !isPlain(member) ? (JSON.stringify(member) as string | undefined) : null;
      if (text === undefined) continue;
      add(`${comma}${JSON.stringify(key)}:`);
      if (text === null) write(member, depth + 1);
      else add(text);
      comma = ',';
    }
    addByte(CLOSE_OBJECT);
    return true;
  };
  if (!write(value, 0)) throw new TypeError(`JSON.stringify writes nothing for a ${typeof value}`);
  return bytes.subarray(0, length);
}
