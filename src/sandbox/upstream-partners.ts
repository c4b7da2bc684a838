// PartnerRecords as an upstream ERP or CRM would publish them about the sandbox's
// organizations: mostly recognisable, some noisy (typos, abbreviations, missing parts),
// some about organizations the dataset does not know, some invalid, some re-sent or
// updated. Deterministic per seed: the examples file, the integration tests and the
// benchmarks all draw from here.
import type { PartnerRecord } from '../serde/partner-record.ts';
import type { Organization, SandboxDataset } from './dataset/dataset.ts';
import { Random } from './dataset/random.ts';

export interface UpstreamOptions {
  /** Records to produce. */
  count: number;
  seed: number;
  /** Shares of the kinds of record; the rest are faithful copies of dataset organizations. */
  noisy?: number;
  unknown?: number;
  invalid?: number;
  resent?: number;
  updated?: number;
}

/** One upstream record: valid records carry a PartnerRecord, invalid ones the raw line or value. */
export type UpstreamRecord =
  | {
      kind: 'faithful' | 'noisy' | 'unknown' | 'resent' | 'updated';
      partner: PartnerRecord;
      organization?: number;
    }
  | { kind: 'invalid'; reason: string; partner: PartnerRecord | null; raw?: string };

const SOURCE_SYSTEMS = ['ERP-EU', 'ERP-US', 'CRM', 'SUPPLIER-PORTAL'];

function typo(random: Random, text: string): string {
  if (text.length < 4) return text;
  const at = random.between(1, text.length - 3);
  return random.chance(0.5)
    ? text.slice(0, at) + text.slice(at + 1)
    : text.slice(0, at) + text[at + 1] + text[at] + text.slice(at + 2);
}

export function partnerOf(
  organization: Organization,
  partnerId: string,
  sourceSystem: string,
  changedAt: number,
): PartnerRecord {
  const { address } = organization;
  return {
    partnerId,
    sourceSystem,
    names: [organization.name],
    legalForm: organization.legalForm.short,
    addresses: [
      {
        street: address.street,
        houseNumber: address.houseNumber,
        postCode: address.postCode,
        town: address.town,
        region: address.region,
        country: address.country,
      },
    ],
    identifiers: organization.identifiers
      .filter((id) => id.kind === 'REGISTER' || id.kind === 'LEI')
      .slice(0, 1)
      .map((id) => ({ type: id.type, value: id.value, country: id.kind === 'LEI' ? null : address.country })),
    taxNumbers: organization.identifiers
      .filter((id) => id.kind === 'VAT')
      .slice(0, 1)
      .map((id) => ({ type: id.type, value: id.value })),
    changedAt,
  };
}

function noisy(random: Random, partner: PartnerRecord, organization: Organization): PartnerRecord {
  const noise = random.int(4);
  const address = partner.addresses[0];
  switch (noise) {
    case 0:
      return { ...partner, names: [typo(random, organization.name)], identifiers: [], taxNumbers: [] };
    case 1:
      return { ...partner, legalForm: organization.legalForm.long, names: [organization.name.toUpperCase()] };
    case 2:
      return {
        ...partner,
        addresses: address ? [{ ...address, street: null, houseNumber: null }] : [],
        taxNumbers: [],
      };
    default:
      return {
        ...partner,
        names: [`${organization.name} ${organization.legalForm.short}`],
        legalForm: null,
        identifiers: [],
      };
  }
}

const INVALID: readonly ((p: PartnerRecord) => {
  reason: string;
  partner: PartnerRecord | null;
  raw?: string;
})[] = [
  (p) => ({ reason: 'no name or identifier', partner: { ...p, names: [], identifiers: [], taxNumbers: [] } }),
  (p) => ({
    reason: 'invalid country',
    partner: { ...p, addresses: p.addresses.map((a) => ({ ...a, country: 'XX' })) },
  }),
  (p) => ({ reason: 'oversize name', partner: { ...p, names: ['N'.repeat(300)] } }),
  (p) => ({ reason: 'empty partner id', partner: { ...p, partnerId: '' } }),
  () => ({ reason: 'not JSON', partner: null, raw: '{"partnerId": "broken", "names": [' }),
  (p) => ({ reason: 'wrong type', partner: null, raw: JSON.stringify({ ...p, changedAt: 'yesterday' }) }),
];

/** Deterministic stream of upstream records about the dataset's organizations. */
export function upstreamPartners(dataset: SandboxDataset, options: UpstreamOptions): UpstreamRecord[] {
  const random = new Random(options.seed);
  const shares = {
    noisy: options.noisy ?? 0.25,
    unknown: options.unknown ?? 0.08,
    invalid: options.invalid ?? 0.03,
    resent: options.resent ?? 0.04,
    updated: options.updated ?? 0.03,
  };
  const organizations = dataset.organizations;
  const records: UpstreamRecord[] = [];
  const published: { partner: PartnerRecord; organization: Organization }[] = [];
  const baseTime = Date.UTC(2026, 0, 1);
  for (let i = 0; i < options.count; i += 1) {
    const changedAt = baseTime + i * 1000;
    const sourceSystem = random.pick(SOURCE_SYSTEMS);
    const draw = random.next();
    let threshold = shares.invalid;
    const organization = random.pick(organizations);
    const partnerId = `P-${String(i).padStart(6, '0')}`;
    const base = partnerOf(organization, partnerId, sourceSystem, changedAt);
    if (draw < threshold) {
      const make = INVALID[i % INVALID.length] as (typeof INVALID)[number];
      records.push({ kind: 'invalid', ...make(base) });
      continue;
    }
    if (draw < (threshold += shares.resent) && published.length > 0) {
      const earlier = random.pick(published);
      records.push({
        kind: 'resent',
        partner: { ...earlier.partner, changedAt },
        organization: organization.index,
      });
      continue;
    }
    if (draw < (threshold += shares.updated) && published.length > 0) {
      const earlier = random.pick(published);
      const partner = {
        ...noisy(random, earlier.partner, earlier.organization),
        partnerId: earlier.partner.partnerId,
        changedAt,
      };
      records.push({ kind: 'updated', partner, organization: earlier.organization.index });
      continue;
    }
    if (draw < (threshold += shares.unknown)) {
      const other = random.pick(organizations);
      const partner = {
        ...base,
        names: [`${typo(random, other.name)} ${typo(random, organization.name)}`],
        identifiers: [],
        taxNumbers: [],
      };
      records.push({ kind: 'unknown', partner });
      continue;
    }
    const kind = draw < threshold + shares.noisy ? 'noisy' : 'faithful';
    const partner = kind === 'noisy' ? noisy(random, base, organization) : base;
    published.push({ partner, organization });
    records.push({ kind, partner, organization: organization.index });
  }
  return records;
}

/** The NDJSON line an upstream file would hold for the record. */
export function ndjsonLine(record: UpstreamRecord): string {
  if (record.kind === 'invalid' && record.raw !== undefined) return record.raw;
  return JSON.stringify(record.partner);
}
