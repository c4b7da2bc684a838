// Decoders from input bytes to a PartnerRecord. JSON input is checked against the
// same Avro schema as Avro input (one source of truth), with Avro defaults filled in.
import type { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import avro from 'avsc';
import type { PartnerRecord } from './partner-record.ts';
import { pipelineSchema } from './schemas.ts';
import { blockCountCheck } from './block-counts.ts';
import { SerdeError } from './errors.ts';
import { nullableReader } from './nullable-reader.ts';
import { registryFailure } from './registry-failure.ts';
import { readerNamedLike } from './writer-names.ts';
import { checkUtf8, invalidUtf8Path, replacementCharScan, stringsAsBytes, withoutBom } from './utf8.ts';

export interface PartnerDecoder {
  decode(value: Buffer): Promise<PartnerRecord>;
  /**
   * Decodes without waiting when everything needed is at hand (the writer schema is known);
   * undefined when decode() must be awaited instead. Throws as decode() rejects.
   */
  decodeNow?(value: Buffer): PartnerRecord | undefined;
  /**
   * The partner id a tombstone's key names, where the key's bytes are not simply its text:
   * Avro input's keys may be written by a Confluent Avro key serializer (the wire format, an
   * Avro string). Without this method a key is its UTF-8 text.
   */
  decodeKey?(key: Buffer): Promise<string>;
  /** decodeKey() without waiting; undefined when the key's schema must be fetched first. */
  decodeKeyNow?(key: Buffer): string | undefined;
}

function checkFields(type: avro.Type, value: unknown): PartnerRecord {
  const paths: string[] = [];
  if (!type.isValid(value, { errorHook: (path) => paths.push(path.join('.') || '(root)') })) {
    throw new SerdeError('DECODE_INVALID_FIELDS', `fields do not fit PartnerRecord: ${paths.join(', ')}`, {
      details: { paths },
    });
  }
  return value as PartnerRecord;
}

/** A JSON escape of a UTF-16 surrogate (`\uD800` to `\uDFFF`), paired or not. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/**
 * JSON as Confluent's JSON Schema serializer writes it: the wire format's magic byte and schema
 * id before the text. No JSON text starts with a NUL byte, so the header is not mistaken for
 * one; the schema it names is not needed, as the record is checked against the pipeline's own.
 */
const withoutWireHeader = (value: Buffer): Buffer =>
  value.length > HEADER_LENGTH && value[0] === MAGIC_BYTE ? value.subarray(HEADER_LENGTH) : value;

/** The JSON text of an input value: without a serializer's wire header or a byte order mark. */
export const jsonBody = (value: Buffer): Buffer => withoutBom(withoutWireHeader(value));

export function jsonPartnerDecoder(): PartnerDecoder {
  const type = pipelineSchema('PartnerRecord').type;
  return {
    async decode(bytes) {
      const value = jsonBody(bytes);
      checkUtf8(value);
      const text = value.toString('utf8');
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (error) {
        throw new SerdeError('DECODE_NOT_JSON', `not JSON: ${(error as Error).message}`);
      }
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
        throw new SerdeError('DECODE_NOT_JSON', 'not a JSON object');
      }
      // Text that is UTF-8 (checked above) holds no lone surrogate: only an escape can make one,
      // so the walk over every string is for the records that have one.
      const path = SURROGATE_ESCAPE.test(text) ? invalidUtf8Path(parsed) : undefined;
      if (path !== undefined) {
        throw new SerdeError('DECODE_INVALID_UTF8', `JSON string ${path} escapes a lone surrogate`, {
          details: { path },
        });
      }
      let filled: unknown;
      try {
        // clone() fills in the schema's defaults for missing fields.
        filled = type.clone(parsed, { wrapUnions: false });
      } catch {
        filled = parsed;
      }
      return checkFields(type, filled);
    },
  };
}

interface KnownWriter {
  /**
   * The pipeline's reader, or its nullable form for a writer that makes a required field
   * nullable; either named like the writer where only namespaces differ (writer-names.ts).
   */
  reader: avro.Type;
  resolver: avro.Resolver;
  /** Decoded with the nullable reader: each record is checked against the pipeline's reader. */
  nullable: boolean;
  /** Throws on a block count avsc would allocate before noticing the bytes end (see block-counts.ts). */
  checkBlocks(body: Buffer): void;
  /** The writer schema with strings read as bytes, built on first need (see utf8.ts). */
  strict(): avro.Type;
}

const MAGIC_BYTE = 0;
const HEADER_LENGTH = 5;

const inWireFormat = (bytes: Buffer): boolean => bytes.length >= HEADER_LENGTH && bytes[0] === MAGIC_BYTE;

const AVRO_STRING = avro.Type.forSchema('string');

/**
 * The partner id a key names, read without the registry: its text, or for a key in the wire
 * format (a Confluent Avro key serializer's) the Avro string its body is; undefined for a body
 * that is no Avro string alone. For tools that compare keys with a partner id given them (dlq
 * replay --partner); the pipeline also checks the key's schema (decodeKey).
 */
export function partnerIdOfKey(key: Buffer): string | undefined {
  if (!inWireFormat(key)) return key.toString('utf8');
  try {
    return AVRO_STRING.fromBuffer(key.subarray(HEADER_LENGTH)) as string;
  } catch {
    return undefined;
  }
}

const notPartnerIdKey = (schemaId: number, reason: string) =>
  new SerdeError('DECODE_KEY_NOT_PARTNER_ID', `key of schema id ${schemaId} names no partner id: ${reason}`, {
    details: { schemaId },
  });

/**
 * Confluent wire format (magic byte, 4-byte schema id, Avro body), read with the
 * pipeline's reader schema so that older and newer compatible writer schemas decode.
 */
export function avroPartnerDecoder(registry: SchemaRegistry): PartnerDecoder {
  const reader = pipelineSchema('PartnerRecord').type;
  const hasReplacementChar = replacementCharScan(reader);
  // A schema id names one schema for good: one that cannot be built or resolved is refused for
  // every record that names it, with the reason found once, not asked for again each time.
  const writers = new Map<number, KnownWriter | { refused: string }>();
  let nullable: avro.Type | undefined;

  const incompatible = (schemaId: number, reason: string) =>
    new SerdeError('DECODE_INCOMPATIBLE_SCHEMA', `schema id ${schemaId}: ${reason}`, {
      details: { schemaId },
    });

  /** The writer schema of an id decoded before; throws if that id was refused. */
  function knownWriter(schemaId: number): KnownWriter | undefined {
    const known = writers.get(schemaId);
    if (known && 'refused' in known) throw incompatible(schemaId, known.refused);
    return known;
  }

  function refuse(schemaId: number, error: unknown): never {
    const reason = (error as Error).message;
    writers.set(schemaId, { refused: reason });
    throw incompatible(schemaId, reason);
  }

  /** The schema an id names; `refuse` is called when what the registry serves cannot be built. */
  async function fetchSchema(schemaId: number, refuse: (error: unknown) => never): Promise<avro.Type> {
    try {
      return (await registry.getSchema(schemaId)) as unknown as avro.Type;
    } catch (error) {
      if ((error as { status?: unknown }).status === 404) {
        throw new SerdeError('DECODE_UNKNOWN_SCHEMA_ID', `schema id ${schemaId} is not in the registry`, {
          details: { schemaId },
        });
      }
      // Credentials refused: asking again would be refused again, and no record is to blame. The
      // registry not answering is waited for.
      const registry = registryFailure(error, schemaId);
      if (registry) throw registry;
      // Without a status: from building what the registry served (a JSON Schema, an Avro
      // default avsc refuses, an unknown schemaType), which asking again would only serve again.
      refuse(error);
    }
  }

  async function writerFor(schemaId: number): Promise<KnownWriter> {
    const known = knownWriter(schemaId);
    if (known) return known;
    const writer = await fetchSchema(schemaId, (error) => refuse(schemaId, error));
    let resolved: Pick<KnownWriter, 'reader' | 'resolver' | 'nullable'>;
    try {
      const named = readerNamedLike(reader, writer);
      resolved = { reader: named, resolver: named.createResolver(writer), nullable: false };
    } catch (error) {
      try {
        const lenient = readerNamedLike((nullable ??= nullableReader(reader)), writer);
        resolved = { reader: lenient, resolver: lenient.createResolver(writer), nullable: true };
      } catch {
        // The reason of the pipeline's own reader: it names what the writer cannot give.
        refuse(schemaId, error);
      }
    }
    let strict: avro.Type | undefined;
    const entry = {
      ...resolved,
      checkBlocks: blockCountCheck(writer),
      strict: () => (strict ??= stringsAsBytes(writer)),
    };
    writers.set(schemaId, entry);
    return entry;
  }

  function schemaIdOf(value: Buffer): number {
    if (!inWireFormat(value)) {
      throw new SerdeError(
        'DECODE_NOT_AVRO',
        'missing the magic byte and schema id of the Confluent wire format',
      );
    }
    return value.readInt32BE(1);
  }

  function decodeWith(writer: KnownWriter, schemaId: number, value: Buffer): PartnerRecord {
    const body = value.subarray(HEADER_LENGTH);
    let decoded: unknown;
    try {
      writer.checkBlocks(body);
      decoded = writer.reader.fromBuffer(body, writer.resolver);
    } catch (error) {
      throw new SerdeError(
        'DECODE_CORRUPT_AVRO',
        `Avro body of schema id ${schemaId}: ${(error as Error).message}`,
        {
          details: { schemaId },
        },
      );
    }
    if (writer.nullable) checkFields(reader, decoded);
    // A U+FFFD is either genuine or avsc's stand-in for invalid bytes: only the bytes tell.
    if (hasReplacementChar(decoded)) {
      let path: string | undefined;
      try {
        path = invalidUtf8Path(writer.strict().fromBuffer(body));
      } catch (error) {
        // Read leniently, the body skipped what the reader has no field for; read whole, with
        // strings as bytes, it may not fit its schema after all (an enum index out of range).
        // Whatever fails here, the record is the cause: a dead letter, never an uncoded error.
        throw new SerdeError(
          'DECODE_CORRUPT_AVRO',
          `Avro body of schema id ${schemaId}, read with strings as bytes: ${(error as Error).message}`,
          { details: { schemaId } },
        );
      }
      if (path !== undefined) {
        throw new SerdeError('DECODE_INVALID_UTF8', `Avro string ${path} is not valid UTF-8`, {
          details: { schemaId, path },
        });
      }
    }
    // Decoded with the reader schema (or checked above), the record fits it: no second check.
    return decoded as PartnerRecord;
  }

  // Keys' schemas apart from values': an id is refused as a key for what makes it no partner id.
  const keyWriters = new Map<number, avro.Type | { refused: string }>();

  function knownKeyWriter(schemaId: number): avro.Type | undefined {
    const known = keyWriters.get(schemaId);
    if (known && 'refused' in known) throw notPartnerIdKey(schemaId, known.refused);
    return known;
  }

  function refuseKey(schemaId: number, reason: string): never {
    keyWriters.set(schemaId, { refused: reason });
    throw notPartnerIdKey(schemaId, reason);
  }

  async function keyWriterFor(schemaId: number): Promise<avro.Type> {
    const known = knownKeyWriter(schemaId);
    if (known) return known;
    const writer = await fetchSchema(schemaId, (error) => refuseKey(schemaId, (error as Error).message));
    if (writer.typeName !== 'string')
      refuseKey(schemaId, `its schema is an Avro ${writer.typeName}, not a string`);
    keyWriters.set(schemaId, writer);
    return writer;
  }

  function keyWith(writer: avro.Type, schemaId: number, key: Buffer): string {
    try {
      return writer.fromBuffer(key.subarray(HEADER_LENGTH)) as string;
    } catch (error) {
      throw new SerdeError(
        'DECODE_CORRUPT_AVRO',
        `Avro key of schema id ${schemaId}: ${(error as Error).message}`,
        {
          details: { schemaId },
        },
      );
    }
  }

  return {
    async decode(value) {
      const schemaId = schemaIdOf(value);
      return decodeWith(await writerFor(schemaId), schemaId, value);
    },
    decodeNow(value) {
      const schemaId = schemaIdOf(value);
      const writer = knownWriter(schemaId);
      return writer && decodeWith(writer, schemaId, value);
    },
    // No partner id's text starts with a NUL byte: such a key is in the wire format.
    async decodeKey(key) {
      if (!inWireFormat(key)) return key.toString('utf8');
      const schemaId = key.readInt32BE(1);
      return keyWith(await keyWriterFor(schemaId), schemaId, key);
    },
    decodeKeyNow(key) {
      if (!inWireFormat(key)) return key.toString('utf8');
      const schemaId = key.readInt32BE(1);
      const writer = knownKeyWriter(schemaId);
      return writer && keyWith(writer, schemaId, key);
    },
  };
}
