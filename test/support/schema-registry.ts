import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import avro from 'avsc';
import { inject } from 'vitest';

export const schemaRegistry = (): SchemaRegistry => new SchemaRegistry({ host: inject('schemaRegistryUrl') });

/**
 * Deletes a subject so registry state does not leak between tests. Soft delete only: test
 * files run two at a time against one registry, every test registers the same output schemas
 * under its own subjects, and a permanent delete once took a shared schema's content away from
 * a test still decoding with its id ("No content with ID '12' was found").
 */
export async function deleteSubject(subject: string): Promise<void> {
  const root = inject('schemaRegistryUrl');
  await fetch(`${root}/subjects/${encodeURIComponent(subject)}`, { method: 'DELETE' });
}

/**
 * Registers an Avro schema through the registry's REST API, as a Java serializer does (the
 * kafkajs registry client registers named types only, no `"string"` for keys), and encodes
 * values of it in the Confluent wire format.
 */
export async function registerWireSchema(
  subject: string,
  schema: unknown,
): Promise<{ id: number; encode(value: unknown): Buffer }> {
  const root = inject('schemaRegistryUrl');
  const response = await fetch(`${root}/subjects/${encodeURIComponent(subject)}/versions`, {
    method: 'POST',
    headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
    body: JSON.stringify({ schema: JSON.stringify(schema) }),
  });
  if (!response.ok)
    throw new Error(`registering ${subject}: HTTP ${response.status} ${await response.text()}`);
  const { id } = (await response.json()) as { id: number };
  const type = avro.Type.forSchema(schema as avro.Schema);
  const header = Buffer.alloc(5);
  header.writeInt32BE(id, 1);
  return { id, encode: (value) => Buffer.concat([header, type.toBuffer(value)]) };
}
