// Avro resolves a writer's record, enum or fixed type against the reader's type of the same
// unqualified name (the specification; Java's resolver and the schema registry's compatibility
// check compare names without their namespace): producers generate the schema in a namespace
// of their own, a Java team's package say (`com.acme.crm.PartnerRecord`). avsc matches the
// full name or an alias only, so every record of such a producer was refused. The reader built
// here takes the writer's full names as aliases of its types of the same unqualified name.
import avro from 'avsc';

interface NamedNode {
  type: string;
  name: string;
  aliases?: string[];
}

const NAMED = new Set(['record', 'error', 'enum', 'fixed']);

const unqualified = (name: string): string => name.slice(name.lastIndexOf('.') + 1);

const isNamed = (schema: unknown): schema is NamedNode =>
  typeof schema === 'object' &&
  schema !== null &&
  !Array.isArray(schema) &&
  NAMED.has((schema as NamedNode).type) &&
  typeof (schema as NamedNode).name === 'string';

/** Every node of a schema, depth first, replaced by what `visit` returns for it. */
function mapSchema(schema: unknown, visit: (node: object) => object): unknown {
  if (Array.isArray(schema)) return schema.map((branch) => mapSchema(branch, visit));
  if (typeof schema !== 'object' || schema === null) return schema;
  const node = { ...(schema as Record<string, unknown>) };
  if (Array.isArray(node.fields))
    node.fields = (node.fields as Record<string, unknown>[]).map((field) => ({
      ...field,
      type: mapSchema(field.type, visit),
    }));
  if ('items' in node) node.items = mapSchema(node.items, visit);
  if ('values' in node) node.values = mapSchema(node.values, visit);
  return visit(node);
}

/**
 * The reader, or a copy of it whose named types also answer to the writer's full names where
 * only the namespace differs. A writer type whose unqualified name the reader does not have is
 * left to avsc, which refuses it as before.
 */
export function readerNamedLike(reader: avro.Type, writer: avro.Type): avro.Type {
  const written = new Map<string, string>();
  mapSchema(writer.schema(), (node) => {
    if (isNamed(node)) written.set(unqualified(node.name), node.name);
    return node;
  });
  let renamed = false;
  const schema = mapSchema(reader.schema(), (node) => {
    if (!isNamed(node)) return node;
    const alias = written.get(unqualified(node.name));
    if (alias === undefined || alias === node.name || node.aliases?.includes(alias)) return node;
    renamed = true;
    return { ...node, aliases: [...(node.aliases ?? []), alias] };
  });
  return renamed ? avro.Type.forSchema(schema as avro.Schema, { logicalTypes: {} }) : reader;
}
