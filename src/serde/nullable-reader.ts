// A writer schema may make a field the reader requires nullable (a union with null, as schemas
// generated from database columns often do). The Avro specification resolves a writer's union
// value by value: a value of the branch the reader's type matches is read, a null is an error for
// that value alone. avsc, like Java's compatibility check, refuses such a schema whole, so every
// record of a producer that never writes the null would be a dead letter. The reader built here
// takes every place the pipeline's reader requires a value as nullable; what it decodes is then
// checked against the pipeline's reader, so only a record that carries a null there is refused.
import avro from 'avsc';

interface NamedSchema {
  type: string;
  fields?: { type: unknown }[];
  items?: unknown;
  values?: unknown;
}

/** The reader schema with each field, array item and map value also taking null. */
export function nullableReader(reader: avro.Type): avro.Type {
  return avro.Type.forSchema(within(reader.schema()) as avro.Schema, { logicalTypes: {} });
}

function nullable(schema: unknown): unknown {
  // A union keeps its branches (a union cannot hold a union), each taken as nullable inside.
  if (Array.isArray(schema)) return schema.map(within);
  // Null last: a field's default must fit a union's first branch.
  return schema === 'null' ? schema : [within(schema), 'null'];
}

function within(schema: unknown): unknown {
  if (typeof schema !== 'object' || schema === null) return schema;
  const named = schema as NamedSchema;
  if (named.type === 'record' || named.type === 'error') {
    return { ...named, fields: named.fields?.map((field) => ({ ...field, type: nullable(field.type) })) };
  }
  if (named.type === 'array') return { ...named, items: nullable(named.items) };
  if (named.type === 'map') return { ...named, values: nullable(named.values) };
  return schema;
}
