import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
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
