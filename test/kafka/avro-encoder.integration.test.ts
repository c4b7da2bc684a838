// Output schema registration against the real schema registry: concurrent starts, subjects
// whose compatibility level an operator chose, and a schema the subject really refuses.
import { afterAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { freePort } from '../../deploy/local/processes.ts';
import { registerSchema } from '../../src/kafka/avro-encoder.ts';
import { pipelineSchema } from '../../src/serde/schemas.ts';
import { uniqueName } from '../support/kafka.ts';
import { deleteSubject } from '../support/schema-registry.ts';

const matchResult = pipelineSchema('MatchResult').text;
const subjects: string[] = [];
const newSubject = (): string => {
  const subject = `${uniqueName('encoder')}-value`;
  subjects.push(subject);
  return subject;
};

async function setCompatibility(subject: string, compatibility: string): Promise<void> {
  const response = await fetch(`${inject('schemaRegistryUrl')}/config/${encodeURIComponent(subject)}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
    body: JSON.stringify({ compatibility }),
  });
  expect(response.status).toBe(200);
}

async function compatibilityOf(subject: string): Promise<string> {
  const response = await fetch(`${inject('schemaRegistryUrl')}/config/${encodeURIComponent(subject)}`);
  return ((await response.json()) as { compatibilityLevel: string }).compatibilityLevel;
}

describe('output schema registration', () => {
  const registry = { url: inject('schemaRegistryUrl') };
  afterAll(async () => {
    for (const subject of subjects) await deleteSubject(subject);
  });

  it('regression: two replicas registering at once both start (409 rule already exists)', async () => {
    const subject = newSubject();
    const ids = await Promise.all(
      Array.from({ length: 16 }, () => registerSchema(registry, subject, matchResult)),
    );
    expect(new Set(ids).size).toBe(1);
    expect(await registerSchema(registry, subject, matchResult)).toBe(ids[0]);
  });

  it.each(['NONE', 'FULL'])(
    'regression: an output subject set to compatibility %s does not prevent the start, and keeps its level',
    async (level) => {
      const subject = newSubject();
      const earlier = await fetch(`${registry.url}/subjects/${subject}/versions`, {
        method: 'POST',
        headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
        body: JSON.stringify({ schema: matchResult }),
      });
      const { id } = (await earlier.json()) as { id: number };
      await setCompatibility(subject, level);
      expect(await registerSchema(registry, subject, matchResult)).toBe(id);
      expect(await compatibilityOf(subject)).toBe(level);
    },
  );

  it('regression: an output subject given compatibility FULL before its first version does not prevent the start', async () => {
    const subject = newSubject();
    await setCompatibility(subject, 'FULL');
    const id = await registerSchema(registry, subject, matchResult);
    expect(await registerSchema(registry, subject, matchResult)).toBe(id);
    expect(await compatibilityOf(subject)).toBe('FULL');
  });

  it('registers a new version next to an existing one when the subject level allows it', async () => {
    const subject = newSubject();
    const other = JSON.stringify({ type: 'record', name: 'Other', fields: [{ name: 'a', type: 'string' }] });
    const first = await registerSchema(registry, subject, other);
    await setCompatibility(subject, 'NONE');
    const second = await registerSchema(registry, subject, matchResult);
    expect(second).not.toBe(first);
  });

  it('fails with SCHEMA_INCOMPATIBLE when the subject level refuses the schema next to its versions', async () => {
    const subject = newSubject();
    const other = JSON.stringify({ type: 'record', name: 'Other', fields: [{ name: 'a', type: 'string' }] });
    await registerSchema(registry, subject, other);
    await setCompatibility(subject, 'FULL');
    await expect(registerSchema(registry, subject, matchResult)).rejects.toMatchObject({
      code: 'SCHEMA_INCOMPATIBLE',
      details: { subject, status: 409 },
    });
  });

  it('fails with SCHEMA_REGISTRY_UNAVAILABLE when nothing listens at the registry address', async () => {
    const nowhere = { url: `http://127.0.0.1:${await freePort()}` };
    await expect(registerSchema(nowhere, newSubject(), matchResult)).rejects.toMatchObject({
      code: 'SCHEMA_REGISTRY_UNAVAILABLE',
      canRetry: true,
    });
  });
});
