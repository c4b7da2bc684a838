// The input of a scenario, with what each record should become: realistic PartnerRecords about
// the sandbox's organizations (Avro through the registry), malformed records (dead letters
// before any lookup) and oversize records (a source system so long that the partner's storage
// record exceeds the broker's 1 MB message limit). Every valid record has content of its own,
// so "the same content paid twice" means the same record paid twice.
import { SchemaType, type SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import { generateDataset } from '../../../src/sandbox/dataset/dataset.ts';
import { upstreamPartners } from '../../../src/sandbox/upstream-partners.ts';
import type { PartnerRecord } from '../../../src/serde/partner-record.ts';
import { pipelineSchema } from '../../../src/serde/schemas.ts';

export type Expected = 'match' | 'dead-letter' | 'oversize';

export interface InputRecord {
  key: string | null;
  value: Buffer;
  expected: Expected;
  /** What is wrong with a malformed record. */
  flaw?: string;
}

export interface Encoders {
  v1: (partner: PartnerRecord) => Promise<Buffer>;
  /** A newer compatible writer schema (one more optional field): decoding it needs the registry. */
  v2: (partner: PartnerRecord) => Promise<Buffer>;
}

export async function registerEncoders(registry: SchemaRegistry, topic: string): Promise<Encoders> {
  const v1 = pipelineSchema('PartnerRecord').text;
  const parsed = JSON.parse(v1) as { fields: object[] };
  const v2 = JSON.stringify({
    ...parsed,
    fields: [...parsed.fields, { name: 'chaosNote', type: ['null', 'string'], default: null }],
  });
  const subject = { subject: `${topic}-value` };
  const { id: id1 } = await registry.register({ type: SchemaType.AVRO, schema: v1 }, subject);
  const { id: id2 } = await registry.register({ type: SchemaType.AVRO, schema: v2 }, subject);
  return {
    v1: (partner) => registry.encode(id1, partner),
    v2: (partner) => registry.encode(id2, { ...partner, chaosNote: 'v2' }),
  };
}

const contentOf = (p: PartnerRecord) =>
  JSON.stringify([p.names, p.legalForm, p.addresses, p.identifiers, p.taxNumbers]);

/** `count` valid partners with distinct content, drawn from the sandbox dataset. */
export function validPartners(options: {
  count: number;
  orgs: number;
  seed: number;
  prefix: string;
}): PartnerRecord[] {
  const dataset = generateDataset({ organizations: options.orgs, seed: options.seed });
  const seen = new Set<string>();
  const partners: PartnerRecord[] = [];
  for (const record of upstreamPartners(dataset, {
    count: options.count * 2,
    seed: options.seed,
    invalid: 0,
    resent: 0,
    updated: 0,
  })) {
    if (record.kind === 'invalid' || partners.length === options.count) continue;
    const content = contentOf(record.partner);
    if (seen.has(content)) continue;
    seen.add(content);
    partners.push({ ...record.partner, partnerId: `${options.prefix}-${record.partner.partnerId}` });
  }
  if (partners.length < options.count) throw new Error(`only ${partners.length} distinct partners`);
  return partners;
}

export async function encodeValid(partners: PartnerRecord[], encode: Encoders['v1']): Promise<InputRecord[]> {
  return Promise.all(
    partners.map(async (partner) => ({
      key: partner.partnerId,
      value: await encode(partner),
      expected: 'match' as const,
    })),
  );
}

/** One of each flaw, round robin: bytes no decoder reads, unknown schema ids, partners mapping refuses. */
export async function malformedRecords(
  count: number,
  template: PartnerRecord,
  encode: Encoders['v1'],
): Promise<InputRecord[]> {
  const unknownSchemaId = Buffer.from([0, 0x7f, 0xff, 0xff, 0x01, 1, 2, 3]);
  const flaws: [string, (i: number) => Promise<Buffer>][] = [
    ['not Avro', async (i) => Buffer.from(`{"partnerId": "broken-${i}", "names": [`)],
    ['unknown schema id', async () => unknownSchemaId],
    ['truncated Avro', async (i) => (await encode({ ...template, partnerId: `cut-${i}` })).subarray(0, 12)],
    [
      'nothing to compare',
      async (i) =>
        encode({ ...template, partnerId: `empty-${i}`, names: [], identifiers: [], taxNumbers: [] }),
    ],
    [
      'invalid country',
      async (i) =>
        encode({
          ...template,
          partnerId: `country-${i}`,
          addresses: template.addresses.map((address) => ({ ...address, country: 'X1' })),
        }),
    ],
    ['empty partner id', async () => encode({ ...template, partnerId: '' })],
  ];
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const [flaw, make] = flaws[i % flaws.length] as (typeof flaws)[number];
      return { key: `malformed-${i}`, value: await make(i), expected: 'dead-letter' as const, flaw };
    }),
  );
}

/** Valid partners whose storage record exceeds 1 MB: a source system of `bytes` characters. */
export async function oversizeRecords(
  partners: PartnerRecord[],
  bytes: number,
  encode: Encoders['v1'],
): Promise<InputRecord[]> {
  return Promise.all(
    partners.map(async (partner) => ({
      key: partner.partnerId,
      value: await encode({ ...partner, sourceSystem: 'S'.repeat(bytes) }),
      expected: 'oversize' as const,
    })),
  );
}
