import { describe, expect, it } from 'vitest';
import { COUNTRY_CODES } from '../../src/sandbox/dataset/countries/index.ts';
import { DATA_SOURCES, DEFAULT_SOURCE_IDS } from '../../src/sandbox/dataset/data-sources.ts';
import { generateDataset } from '../../src/sandbox/dataset/dataset.ts';
import { normalizeSubject } from '../../src/sandbox/matching/profile.ts';
import { subjectFromNormalized } from '../../src/sandbox/matching/query-shapes.ts';

const dataset = generateDataset({ organizations: 3000, seed: 7 });
const allRecords = dataset.organizations.flatMap((org) =>
  org.svcIds.map((svcId) => dataset.getRecord(svcId)),
);

describe('generateDataset', () => {
  it('generates the same organizations and records for the same seed', () => {
    const again = generateDataset({ organizations: 3000, seed: 7 });
    expect(again.organizations).toEqual(dataset.organizations);
    expect(again.recordAt(1234)).toEqual(dataset.recordAt(1234));
    const svcId = dataset.organizations[10]?.svcIds[0] ?? '';
    expect(again.relationsOf(svcId)).toEqual(dataset.relationsOf(svcId));
  });

  it('generates different data for a different seed', () => {
    const other = generateDataset({ organizations: 3000, seed: 8 });
    const names = (source: typeof dataset) => source.organizations.slice(0, 50).map((org) => org.name);
    expect(names(other)).not.toEqual(names(dataset));
  });

  it('spreads organizations over all ten countries', () => {
    const countries = new Set(dataset.organizations.map((org) => org.country));
    expect([...countries].sort()).toEqual([...COUNTRY_CODES].sort());
  });

  it('lists every organization in one to four data sources, the first one searched by default', () => {
    const defaults: readonly string[] = DEFAULT_SOURCE_IDS;
    for (const org of dataset.organizations) {
      expect(org.svcIds.length).toBeGreaterThanOrEqual(1);
      expect(org.svcIds.length).toBeLessThanOrEqual(4);
      expect(defaults).toContain(dataset.getRecord(org.svcIds[0] ?? '')?.dataSource.id);
    }
    const counts = new Set(dataset.organizations.map((org) => org.svcIds.length));
    expect([...counts].sort()).toEqual([1, 2, 3, 4]);
  });

  it('names records <PREFIX>:<value> after their data source, each svcId once', () => {
    const svcIds = allRecords.map((record) => record?.svcId);
    expect(new Set(svcIds).size).toBe(dataset.recordCount);
    for (const record of allRecords) {
      expect(record?.svcId.startsWith(`${record.dataSource.prefix}:`)).toBe(true);
      expect(record?.svcId).toMatch(/^[A-Z]+:[0-9A-Za-z-]+$/);
    }
  });

  it('uses every data source and each category', () => {
    const used = new Set(allRecords.map((record) => record?.dataSource.id));
    expect([...used].sort()).toEqual(DATA_SOURCES.map((source) => source.id).sort());
    expect(new Set(DATA_SOURCES.map((source) => source.category))).toEqual(
      new Set(['OPEN', 'FREE', 'COMMERCIAL']),
    );
  });

  it('returns records in the business partner shape', () => {
    const record = dataset.getRecord(dataset.organizations[0]?.svcIds[0] ?? '');
    expect(record).toMatchObject({
      dataSource: { id: expect.any(String), name: expect.any(String), category: expect.any(String) },
      lastUpdatedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      businessPartner: {
        names: [{ value: expect.any(String) }],
        addresses: [{ country: { shortName: dataset.organizations[0]?.country } }],
        categories: [{ technicalKey: expect.stringMatching(/^NACE_[A-Z]$/) }],
        types: [{ technicalKey: 'ORGANIZATION' }],
        formattedErpRecord: { name1: expect.any(String) },
      },
    });
    expect(dataset.getRecord('OPENREG:unknown')).toBeUndefined();
  });

  it('gives data sources their own completeness and spelling', () => {
    const bySource = (id: string) => allRecords.filter((record) => record?.dataSource.id === id);
    for (const place of bySource('GEOPLACES')) {
      expect(place?.businessPartner.identifiers).toEqual([]);
      expect(place?.businessPartner.legalForm).toBeUndefined();
    }
    for (const vat of bySource('VATREG')) {
      const name = vat?.businessPartner.names[0]?.value ?? '';
      expect(name).toBe(name.toUpperCase());
      expect(vat?.businessPartner.identifiers.every((id) => id.type.technicalKey.endsWith('_VAT_ID'))).toBe(
        true,
      );
    }
    expect(
      bySource('BZST').every((record) => record?.businessPartner.addresses[0]?.country.shortName === 'DE'),
    ).toBe(true);
    expect(
      bySource('NLBR').every((record) => record?.businessPartner.addresses[0]?.country.shortName === 'NL'),
    ).toBe(true);
    expect(bySource('ERP').every((record) => record?.storageId === 'erp-customers')).toBe(true);
  });

  it("builds each record's match profile as the matcher would normalise the record", () => {
    for (let record = 0; record < dataset.recordCount; record++) {
      const stored = dataset.matchIndex.profiles[record];
      const normalized = normalizeSubject(subjectFromNormalized(dataset.recordAt(record).businessPartner));
      expect(stored).toEqual(normalized);
    }
  });

  it('records ownership relations on both sides', () => {
    const relations = dataset.organizations.flatMap((org) =>
      (dataset.relationsOf(org.svcIds[0] ?? '') ?? []).map((relation) => ({ org, relation })),
    );
    expect(relations.length).toBeGreaterThan(100);
    for (const { org, relation } of relations) {
      const back = dataset.relationsOf(relation.svcId) ?? [];
      const inverse = relation.typeTechnicalKey === 'PARENT' ? 'SUBSIDIARY' : 'PARENT';
      expect(back).toContainEqual({ ...relation, svcId: org.svcIds[0], typeTechnicalKey: inverse });
      if (relation.endedAt !== undefined) expect(relation.endedAt > relation.startedAt).toBe(true);
    }
  });

  it('rejects an organization count out of range with a coded error', () => {
    expect(() => generateDataset({ organizations: 0, seed: 1 })).toThrow(
      expect.objectContaining({ code: 'SANDBOX_INVALID_DATASET_OPTIONS' }),
    );
    expect(() => generateDataset({ organizations: 10, seed: 1.5 })).toThrow(
      expect.objectContaining({ code: 'SANDBOX_INVALID_DATASET_OPTIONS' }),
    );
  });
});
