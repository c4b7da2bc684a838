// avsc reads an array or map block by trusting its item count: `new Array(n)`, then n reads
// (lib/types.js, ArrayType and MapType _read; _skip loops n times). A 16-byte body whose
// count says 4x10^8 runs the process out of memory before avsc notices that the bytes ended,
// and as its offset is never committed, every restart meets it again. So the body is first
// walked with the writer schema, exactly as avsc will read it, and a count that the remaining
// bytes cannot hold is refused before avsc sees it. Only array items of a type that takes no
// bytes at all (null, fixed of size 0, records of only those, nested) may count more items
// than bytes (a map's items never do: each has a string key, at least its length byte). Those
// are refused beyond MAX_ZERO_WIDTH_ITEMS in all of a body's blocks together: the bytes do not
// bound them. 20 bytes counting 2^40 nulls in a field the reader skips kept avsc looping for six
// minutes (10^9 turns take 0.3 s; a count near 2^53, a month); 18 bytes counting 4x10^8 of the
// reader's addresses, written as records of a null, ran it out of memory.
import avro from 'avsc';

/**
 * Items that take no bytes a body may count, in all its blocks and nested arrays together.
 * A writer has little reason to send any (nulls or empty records as markers: a handful). The
 * reader reads each as an object (a PartnerAddress of six defaults), or avsc skips it in one
 * turn of a loop. Measured on Node 24: 10,000 addresses hold 0.8 MiB, a record of ordinary
 * size; 10^6 hold 76 MiB and take 0.3 s, a sixth of the pod's 512 MiB memory limit for one
 * record. Unlike other items, the body's bytes do not bound them, so the ceiling is fixed,
 * whatever the body's size.
 */
export const MAX_ZERO_WIDTH_ITEMS = 10_000;

interface Cursor {
  buf: Buffer;
  pos: number;
  /** Items that take no bytes the rest of the body may still count. */
  zeroWidthLeft: number;
}

/** Advances the cursor over one value; undefined for a type whose values take no bytes. */
type Walk = (cursor: Cursor) => void;

/**
 * A check of an Avro body written with `writer`: throws an Error naming the first block count
 * the remaining bytes cannot hold, the first block of items that take no bytes beyond
 * MAX_ZERO_WIDTH_ITEMS in all, the first length that is negative, or the end of the bytes met
 * in the middle of a value. Built once per writer schema.
 */
export function blockCountCheck(writer: avro.Type): (body: Buffer) => void {
  const walk = walkOf(writer, new Map());
  return (body) => walk?.({ buf: body, pos: 0, zeroWidthLeft: MAX_ZERO_WIDTH_ITEMS });
}

function readLong(cursor: Cursor): number {
  let byte = cursor.buf[cursor.pos++];
  // Most longs of a record (lengths, counts, union branches) take one byte.
  if (byte !== undefined && byte < 0x80) return byte & 1 ? -(byte + 1) / 2 : byte / 2;
  let n = 0;
  let scale = 1;
  for (;;) {
    if (byte === undefined) throw new Error('the body ends in the middle of a value');
    n += (byte & 0x7f) * scale;
    if (byte < 0x80) break;
    scale *= 128;
    byte = cursor.buf[cursor.pos++];
  }
  return n % 2 === 0 ? n / 2 : -(n + 1) / 2;
}

function readLength(cursor: Cursor): number {
  const length = readLong(cursor);
  // A negative length moves avsc's position back: it would read the same bytes forever.
  if (length < 0) throw new Error(`negative length ${length}`);
  return length;
}

function skipString(cursor: Cursor): void {
  const length = readLength(cursor);
  cursor.pos += length;
}

const skip =
  (bytes: number): Walk =>
  (cursor) => {
    cursor.pos += bytes;
  };

function walkOf(type: avro.Type, known: Map<avro.Type, Walk | undefined>): Walk | undefined {
  if (known.has(type)) return known.get(type);
  if (avro.Type.isType(type, 'logical'))
    return walkOf((type as avro.types.LogicalType).underlyingType, known);
  switch (type.typeName) {
    case 'null':
      return undefined;
    case 'boolean':
      return skip(1);
    case 'float':
      return skip(4);
    case 'double':
      return skip(8);
    case 'fixed': {
      const { size } = type as avro.types.FixedType;
      return size > 0 ? skip(size) : undefined;
    }
    case 'string':
    case 'bytes':
      return skipString;
    case 'array':
      return blocksOf(walkOf((type as avro.types.ArrayType).itemsType, known));
    case 'map': {
      const value = walkOf((type as avro.types.MapType).valuesType as avro.Type, known);
      return blocksOf((cursor) => {
        skipString(cursor);
        value?.(cursor);
      });
    }
    case 'record':
    case 'error': {
      // Registered before its fields, for the records that contain themselves (through an
      // array, a map or a union, which all take bytes: such a record is never zero-width).
      let fields: Walk[] = [];
      const walk: Walk = (cursor) => {
        for (const field of fields) field(cursor);
      };
      known.set(type, walk);
      fields = (type as avro.types.RecordType).fields.flatMap((f) => walkOf(f.type, known) ?? []);
      if (fields.length > 0) return walk;
      known.set(type, undefined);
      return undefined;
    }
    case 'union:unwrapped':
    case 'union:wrapped': {
      const branches = (type as avro.types.UnwrappedUnionType).types.map((t) => walkOf(t, known));
      return (cursor) => {
        const index = readLong(cursor);
        if (!(index >= 0 && index < branches.length))
          throw new Error(`union branch ${index} of ${branches.length}`);
        branches[index]?.(cursor);
      };
    }
    default:
      // int, long, enum and avsc's abstract long: one varint.
      return (cursor) => {
        readLong(cursor);
      };
  }
}

/** Blocks of items, as avsc reads them: a count, then (when negative) a byte size, then items, until a count of 0. */
function blocksOf(item: Walk | undefined): Walk {
  return (cursor) => {
    let count: number;
    while ((count = readLong(cursor)) !== 0) {
      let end: number | undefined;
      if (count < 0) {
        count = -count;
        // avsc's _read ignores the size and reads the items, its _skip jumps by the size:
        // both land in the same place only if the size is that of the items.
        end = readLength(cursor) + cursor.pos;
      }
      if (item) {
        const remaining = cursor.buf.length - cursor.pos;
        if (count > remaining) throw new Error(`a block of ${count} items in the ${remaining} bytes left`);
        for (let i = 0; i < count; i += 1) item(cursor);
      } else if ((cursor.zeroWidthLeft -= count) < 0) {
        // Counted per block, not per item: nothing is added to the walk of other types.
        throw new Error(
          `a block of ${count} items that take no bytes, beyond the ${MAX_ZERO_WIDTH_ITEMS} a body may count in all`,
        );
      }
      if (end !== undefined && cursor.pos !== end)
        throw new Error('a block whose byte size is not that of its items');
    }
  };
}
