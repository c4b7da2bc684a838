import { describe, expect, it } from 'vitest';
import { generateDataset } from '../../src/sandbox/dataset/dataset.ts';
import type { Organization } from '../../src/sandbox/dataset/organizations.ts';
import { LOOKUP_FEATURES } from '../../src/sandbox/matching/features.ts';
import { mostCompleteRecord } from '../../src/sandbox/matching/golden-record.ts';
import type { MatchCandidate } from '../../src/sandbox/matching/matcher.ts';
import { Matcher } from '../../src/sandbox/matching/matcher.ts';
import {
  subjectFromBusinessPartnerParam,
  subjectFromJsonRecord,
} from '../../src/sandbox/matching/query-shapes.ts';
import type { MatchSubject } from '../../src/sandbox/matching/subject.ts';

const dataset = generateDataset({ organizations: 3000, seed: 21 });
const matcher = new Matcher(dataset.matchIndex);
const ALL_SOURCES = LOOKUP_FEATURES.filter((feature) => feature !== 'ACTIVATE_IDENTIFIER_ONLY_MATCH');

const orgOf = (candidate: MatchCandidate | undefined): Organization | undefined =>
  candidate === undefined ? undefined : dataset.organizationOf(candidate.svcId);

/** The organization as an upstream system would send it: name, full address, no identifier. */
function subjectOf(org: Organization, changes: Partial<MatchSubject> = {}): MatchSubject {
  return {
    names: [`${org.name} ${org.legalForm.short}`],
    identifiers: [],
    address: { ...org.address },
    ...changes,
  };
}

/** An organization listed in at least three sources, EXTD among them. */
const listedWidely = dataset.organizations.find(
  (org) => org.svcIds.length >= 3 && org.svcIds.some((svcId) => svcId.startsWith('EXTD:')),
) as Organization;

describe('lookup', () => {
  it('finds an organization by name and address, its records first', () => {
    const org = dataset.organizations[5] as Organization;
    const page = matcher.lookup(subjectOf(org));
    expect(orgOf(page.values[0])).toBe(org);
    expect(page.values[0]?.score).toBe(1);
  });

  it('finds an organization despite a typo and the legal form written out', () => {
    const org = dataset.organizations.find(
      (candidate) => candidate.legalForm.short === 'GmbH',
    ) as Organization;
    const misspelt = `${org.name.replace(/[aeiou]/, 'x')} Gesellschaft mit beschränkter Haftung`;
    const best = matcher.lookup(subjectOf(org, { names: [misspelt] })).values[0];
    expect(orgOf(best)).toBe(org);
    expect(best?.score).toBeGreaterThan(0.8);
  });

  it('lets an exact identifier decide even when the name differs', () => {
    const org = dataset.organizations[7] as Organization;
    const register = org.identifiers.find((identifier) => identifier.kind === 'REGISTER');
    const page = matcher.lookup({
      names: ['Completely Different Name Ltd'],
      identifiers: [{ value: register?.value ?? '', type: register?.type ?? '' }],
    });
    expect(orgOf(page.values[0])).toBe(org);
    expect(page.values[0]?.score).toBeGreaterThanOrEqual(0.95);
  });

  it('with ACTIVATE_IDENTIFIER_ONLY_MATCH compares identifiers only', () => {
    const org = dataset.organizations[7] as Organization;
    const register = org.identifiers.find((identifier) => identifier.kind === 'REGISTER');
    const options = { featuresOn: ['ACTIVATE_IDENTIFIER_ONLY_MATCH' as const] };
    const byIdentifier = matcher.lookup(
      { names: ['Anything'], identifiers: [{ value: register?.value ?? '' }] },
      options,
    );
    expect(byIdentifier.values.map((value) => value.score)).toEqual(byIdentifier.values.map(() => 1));
    expect(byIdentifier.values.every((value) => orgOf(value) === org)).toBe(true);
    expect(matcher.lookup(subjectOf(org), options).total).toBe(0);
  });

  it('returns only candidates at or above the matching threshold', () => {
    const org = dataset.organizations[9] as Organization;
    const subject = { names: [org.name], identifiers: [], address: { country: org.country } };
    const loose = matcher.lookup(subject, { matchingThreshold: 0.15, limit: 1000 });
    const strict = matcher.lookup(subject, { matchingThreshold: 0.8, limit: 1000 });
    expect(loose.values.every((value) => value.score >= 0.15)).toBe(true);
    expect(strict.values.every((value) => value.score >= 0.8)).toBe(true);
    expect(strict.total).toBeGreaterThan(0);
    expect(strict.total).toBeLessThan(loose.total);
  });

  it('considers at most maxCandidates candidates', () => {
    const common = { names: ['Logistik'], identifiers: [], address: { country: 'DE' } };
    const page = matcher.lookup(common, { matchingThreshold: 0, maxCandidates: 20, limit: 1000 });
    expect(page.total).toBeLessThanOrEqual(20);
  });

  it('sorts candidates by descending score, then svcId', () => {
    const page = matcher.lookup(subjectOf(dataset.organizations[11] as Organization), {
      matchingThreshold: 0.2,
      limit: 1000,
    });
    const sorted = [...page.values].sort((a, b) => b.score - a.score || (a.svcId < b.svcId ? -1 : 1));
    expect(page.values).toEqual(sorted);
  });
});

describe('data sources', () => {
  const svcIdsOf = (page: { values: readonly MatchCandidate[] }) => page.values.map((value) => value.svcId);

  it('searches sources that need a feature only with that feature', () => {
    const subject = subjectOf(listedWidely);
    expect(svcIdsOf(matcher.lookup(subject)).some((svcId) => svcId.startsWith('EXTD:'))).toBe(false);
    const withExtd = matcher.lookup(subject, { featuresOn: ['ACTIVATE_DATASOURCE_EXTD'] });
    expect(svcIdsOf(withExtd).some((svcId) => svcId.startsWith('EXTD:'))).toBe(true);
  });

  it('narrows to the listed dataSources', () => {
    const page = matcher.lookup(subjectOf(listedWidely), { featuresOn: ALL_SOURCES, dataSources: ['EXTD'] });
    expect(page.total).toBeGreaterThan(0);
    expect(page.values.every((value) => value.dataSourceId === 'EXTD')).toBe(true);
  });

  it('searches data mirrors with ACTIVATE_DATASOURCE_STORAGES, narrowed by storagesDataSources', () => {
    const mirrored = dataset.organizations.find((org) =>
      org.svcIds.some((svcId) => svcId.startsWith('ERP:')),
    ) as Organization;
    const subject = subjectOf(mirrored);
    const inMirror = (options: Parameters<Matcher['lookup']>[1]) =>
      svcIdsOf(matcher.lookup(subject, options)).some((svcId) => svcId.startsWith('ERP:'));
    expect(inMirror({})).toBe(false);
    expect(inMirror({ featuresOn: ['ACTIVATE_DATASOURCE_STORAGES'] })).toBe(true);
    const storages = (storageId: string) => ({
      featuresOn: ['ACTIVATE_DATASOURCE_STORAGES' as const],
      storagesDataSources: [{ storageId, dataSources: [] }],
    });
    expect(inMirror(storages('erp-customers'))).toBe(true);
    expect(inMirror(storages('srm-suppliers'))).toBe(false);
  });
});

describe('paging', () => {
  const subject = { names: ['Logistik'], identifiers: [], address: { country: 'DE' } };
  const options = { matchingThreshold: 0.1, maxCandidates: 60 };

  it('returns every candidate exactly once across pages', () => {
    const all = matcher.lookup(subject, { ...options, limit: 1000 });
    expect(all.total).toBeGreaterThan(10);
    const seen: string[] = [];
    let startAfter: string | undefined;
    do {
      const page = matcher.lookup(subject, { ...options, limit: 7, ...(startAfter ? { startAfter } : {}) });
      expect(page.total).toBe(all.total);
      seen.push(...page.values.map((value) => value.svcId));
      startAfter = page.nextStartAfter;
    } while (startAfter !== undefined);
    expect(seen).toEqual(all.values.map((value) => value.svcId));
  });

  it('rejects a cursor it did not hand out', () => {
    expect(() => matcher.lookup(subject, { startAfter: 'not-a-cursor' })).toThrow(
      expect.objectContaining({ code: 'SANDBOX_INVALID_CURSOR' }),
    );
  });
});

describe('golden record', () => {
  it("is the most complete of the best match's records", () => {
    const page = matcher.lookup(subjectOf(listedWidely), { featuresOn: ALL_SOURCES, limit: 1000 });
    const ofBest = page.values.filter((value) => value.entityKey === page.values[0]?.entityKey);
    expect(ofBest.length).toBeGreaterThanOrEqual(3);
    const mostComplete = Math.max(...ofBest.map((value) => value.completeness));
    expect(page.goldenRecord?.completeness).toBe(mostComplete);
    expect(orgOf(page.goldenRecord)).toBe(listedWidely);
  });

  it('of a free set of records is the one with most fields filled', () => {
    const sparse: MatchSubject = { names: ['Acme'], identifiers: [] };
    const full = subjectOf(dataset.organizations[3] as Organization, { legalForm: 'GmbH' });
    const partial = subjectOf(dataset.organizations[3] as Organization, { address: { town: 'Berlin' } });
    expect(mostCompleteRecord([sparse, full, partial])).toBe(1);
    expect(mostCompleteRecord([])).toBe(-1);
  });
});

describe('input shapes', () => {
  it('gives the same candidates for the normalized shape and the jsonRecord shape', () => {
    const org = dataset.organizations[13] as Organization;
    const vat = org.identifiers.find((identifier) => identifier.kind === 'VAT') ?? org.identifiers[0];
    const a = org.address;
    const normalized = subjectFromBusinessPartnerParam({
      names: [{ value: `${org.name} ${org.legalForm.short}` }],
      identifiers: [{ value: vat?.value, type: { technicalKey: vat?.type } }],
      addresses: [
        {
          thoroughfares: [{ value: a.street, number: a.houseNumber }],
          localities: [{ value: a.town }],
          administrativeAreas: [{ value: a.region }],
          postCodes: [{ value: a.postCode }],
          country: { shortName: a.country },
        },
      ],
    });
    const jsonRecord = subjectFromJsonRecord({
      businessPartnerType: 'ORGANIZATION',
      organization: { nameDetails: { formattedOrgName: `${org.name} ${org.legalForm.short}` } },
      taxNumbers: [{ taxNumberType: { code: vat?.type }, taxNumber: vat?.value }],
      addressData: [
        {
          organizationPostalAddress: {
            street: { name: a.street },
            houseNumber: a.houseNumber,
            town: { name: a.town },
            primaryRegion: { code: a.region },
            postCode: a.postCode,
            country: { code: a.country },
          },
        },
      ],
    });
    expect(jsonRecord).toEqual(normalized);
    expect(orgOf(matcher.lookup(normalized).values[0])).toBe(org);
    expect(matcher.lookup(jsonRecord)).toEqual(matcher.lookup(normalized));
  });
});

describe('input errors', () => {
  it('rejects a query with nothing to compare', () => {
    expect(() => matcher.lookup({ names: [' '], identifiers: [] })).toThrow(
      expect.objectContaining({ code: 'SANDBOX_EMPTY_QUERY' }),
    );
  });

  it('rejects options outside the spec limits', () => {
    const subject = subjectOf(dataset.organizations[0] as Organization);
    for (const options of [{ limit: 1001 }, { maxCandidates: 10 }, { matchingThreshold: 1.5 }]) {
      expect(() => matcher.lookup(subject, options)).toThrow(
        expect.objectContaining({ code: 'SANDBOX_INVALID_LOOKUP_OPTIONS' }),
      );
    }
  });
});

describe('free-text search', () => {
  it('finds an organization from name and address in one line', () => {
    const org = dataset.organizations[17] as Organization;
    const a = org.address;
    const page = matcher.search(
      `${org.name} ${org.legalForm.short}, ${a.street} ${a.houseNumber}, ${a.postCode} ${a.town}`,
    );
    expect(orgOf(page.values[0])).toBe(org);
  });

  it('finds an organization from an identifier written with spaces', () => {
    const org = dataset.organizations[19] as Organization;
    const register = org.identifiers.find((identifier) => identifier.kind === 'REGISTER')?.value ?? '';
    const page = matcher.search(`${register.slice(0, 3)} ${register.slice(3)}`);
    expect(orgOf(page.values[0])).toBe(org);
  });
});
