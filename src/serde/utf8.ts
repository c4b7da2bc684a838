// Strict UTF-8 for input strings. JSON input is checked whole. avsc decodes Avro strings
// with Buffer#utf8Slice, which turns invalid bytes into U+FFFD without a word: a partner
// name would then be looked up with characters nobody wrote. Avro encodes `string` and
// `bytes` the same way (a length, then the bytes), so the body read with the writer
// schema's strings as `bytes` yields the exact bytes of every string. That second read
// runs only when a decoded string holds a U+FFFD, so the normal path pays a scan of the
// decoded strings and nothing else.
import { isUtf8 } from 'node:buffer';
import avro from 'avsc';
import { SerdeError } from './errors.ts';

const REPLACEMENT = '\uFFFD';

/** JSON input: checked whole before parsing, which would turn invalid bytes into U+FFFD. */
export function checkUtf8(value: Buffer): void {
  if (!isUtf8(value)) throw new SerdeError('DECODE_INVALID_UTF8', 'JSON input is not valid UTF-8');
}

/**
 * JSON input without a leading UTF-8 byte order mark, which Windows tools write and RFC 8259
 * lets a parser ignore (JSON.parse refuses it). A view of the same bytes: this runs for every
 * record.
 */
export const withoutBom = (value: Buffer): Buffer =>
  value[0] === 0xef && value[1] === 0xbb && value[2] === 0xbf ? value.subarray(3) : value;

type Scan = (value: unknown) => boolean;

/**
 * A function that tells whether any string in a value of `type` holds U+FFFD (genuine or
 * avsc's stand-in for invalid bytes). Built once per type: it visits only the places where
 * the schema has strings: a third of the cost of a walk over the whole value.
 */
export function replacementCharScan(type: avro.Type): Scan {
  return scanOf(type) ?? (() => false);
}

/** undefined: values of this type hold no strings. */
function scanOf(type: avro.Type): Scan | undefined {
  // The guards on the value's kind matter in unions, where a branch sees the others' values.
  if (type instanceof avro.types.StringType) return (v) => typeof v === 'string' && v.includes(REPLACEMENT);
  if (type instanceof avro.types.ArrayType) {
    const item = scanOf(type.itemsType);
    return item && ((v) => Array.isArray(v) && v.some(item));
  }
  if (type instanceof avro.types.MapType) {
    const value = scanOf(type.valuesType);
    return (v) =>
      Object.entries(v as Record<string, unknown>).some(
        ([key, item]) => key.includes(REPLACEMENT) || (value !== undefined && value(item)),
      );
  }
  if (type instanceof avro.types.RecordType) {
    const fields = type.fields.flatMap((f) => {
      const scan = scanOf(f.type);
      return scan ? [{ name: f.name, scan }] : [];
    });
    if (fields.length === 0) return undefined;
    return (v) => fields.some((f) => f.scan((v as Record<string, unknown>)[f.name]));
  }
  if (type instanceof avro.types.UnwrappedUnionType) {
    const branches = type.types.flatMap((t) => scanOf(t) ?? []);
    if (branches.length === 0) return undefined;
    return (v) => v !== null && branches.some((scan) => scan(v));
  }
  if (type instanceof avro.types.WrappedUnionType) {
    const branches = new Map(type.types.flatMap((t) => (scanOf(t) ? [[t.branchName, scanOf(t)]] : [])));
    if (branches.size === 0) return undefined;
    return (v) => {
      if (v === null) return false;
      const [branch, item] = Object.entries(v as Record<string, unknown>)[0] ?? [];
      return branches.get(branch as string)?.(item) ?? false;
    };
  }
  return undefined;
}

/**
 * The writer schema with every string read as bytes. Map keys are strings too: a map is
 * read as the array of key-value records it is encoded as, inside a record of its own (a
 * record adds nothing to the encoding): beside an array in a union, a bare array would make
 * the union hold two branches named "array", which avsc refuses.
 */
export function stringsAsBytes(writer: avro.Type): avro.Type {
  const written = writer.schema();
  // Names no type of the writer has, however it names its own.
  let prefix = 'StrictUtf8';
  while (JSON.stringify(written).includes(prefix)) prefix += '_';
  let maps = 0;
  const convert = (schema: unknown): unknown => {
    if (schema === 'string') return 'bytes';
    if (typeof schema === 'string') return schema;
    if (Array.isArray(schema)) {
      // A union may not hold bytes twice: beside a bytes branch, a string branch stays lenient.
      const named = (b: unknown, t: string) => b === t || (b as { type?: unknown } | null)?.type === t;
      const hasBytes = schema.some((b) => named(b, 'bytes'));
      return schema.map((b) => (hasBytes && named(b, 'string') ? b : convert(b)));
    }
    const s = schema as Record<string, unknown>;
    switch (s.type) {
      case 'string':
        return 'bytes';
      case 'record':
      case 'error':
        return {
          ...s,
          // Defaults only matter to readers of older data; a string default is not a valid bytes default.
          fields: (s.fields as Record<string, unknown>[]).map(({ default: _, ...field }) => ({
            ...field,
            type: convert(field.type),
          })),
        };
      case 'array':
        return { ...s, items: convert(s.items) };
      case 'map':
        maps += 1;
        return {
          type: 'record',
          name: `${prefix}Map${maps}`,
          fields: [
            {
              name: 'entries',
              type: {
                type: 'array',
                items: {
                  type: 'record',
                  name: `${prefix}MapEntry${maps}`,
                  fields: [
                    { name: 'key', type: 'bytes' },
                    { name: 'value', type: convert(s.values) },
                  ],
                },
              },
            },
          ],
        };
      default:
        return s;
    }
  };
  return avro.Type.forSchema(convert(written) as avro.Schema, { logicalTypes: {} });
}

/**
 * The path of the first string whose bytes are not UTF-8, in a value read with stringsAsBytes(),
 * or that holds a lone surrogate, as parsed JSON may (a `\ud800` escape): no UTF-8 can carry it,
 * so the outputs would write bytes that are not UTF-8 either. A walk with a stack of its own:
 * recursive, a JSON record nested a few thousand deep overflowed the call stack, an error
 * without a code that failed the pipeline on every restart.
 */
export function invalidUtf8Path(value: unknown): string | undefined {
  const stack: { value: unknown; path: PathStep | undefined }[] = [{ value, path: undefined }];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const { value: current, path } = item;
    const invalid =
      (Buffer.isBuffer(current) && !isUtf8(current)) ||
      (typeof current === 'string' && !current.isWellFormed());
    if (invalid) return joined(path);
    if (current === null || typeof current !== 'object' || Buffer.isBuffer(current)) continue;
    const entries = Array.isArray(current) ? [...current.entries()] : Object.entries(current);
    // Last first: the stack hands out the first entry next, as the order of the value has it.
    for (let i = entries.length - 1; i >= 0; i -= 1) {
      const [key, child] = entries[i] as [string | number, unknown];
      stack.push({ value: child, path: { key: String(key), parent: path } });
    }
  }
  return undefined;
}

interface PathStep {
  key: string;
  parent: PathStep | undefined;
}

const joined = (path: PathStep | undefined): string => {
  const keys: string[] = [];
  for (let step = path; step; step = step.parent) keys.push(step.key);
  return keys.reverse().join('.') || '(root)';
};
