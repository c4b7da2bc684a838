import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import { inject } from 'vitest';

export const schemaRegistry = (): SchemaRegistry => new SchemaRegistry({ host: inject('schemaRegistryUrl') });

/** Deletes a subject (soft, then hard) so registry state does not leak between tests. */
export async function deleteSubject(subject: string): Promise<void> {
  const root = inject('schemaRegistryUrl');
  const path = `${root}/subjects/${encodeURIComponent(subject)}`;
  await fetch(path, { method: 'DELETE' });
  await fetch(`${path}?permanent=true`, { method: 'DELETE' });
}
