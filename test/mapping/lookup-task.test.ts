import { describe, expect, it } from 'vitest';
import { MappingError } from '../../src/mapping/errors.ts';
import { TASK_LIMITS, contentHash, toJsonRecord, toLookupTask } from '../../src/mapping/lookup-task.ts';
import type { PartnerRecord } from '../../src/serde/partner-record.ts';

const ADDRESS = {
  street: 'Hauptstraße',
  houseNumber: '5',
  postCode: '80331',
  town: 'München',
  region: 'BY',
  country: 'de',
};

const partner = (overrides: Partial<PartnerRecord> = {}): PartnerRecord => ({
  partnerId: 'P-1',
  sourceSystem: 'ERP',
  names: ['Muster Maschinenbau'],
  legalForm: 'GmbH',
  addresses: [
    {
      street: 'Hauptstraße',
      houseNumber: '5',
      postCode: '80331',
      town: 'München',
      region: 'BY',
      country: 'de',
    },
  ],
  identifiers: [{ type: 'DE_HRB', value: 'HRB 12345', country: 'DE' }],
  taxNumbers: [{ type: 'VAT', value: 'DE123456789' }],
  changedAt: 1,
  ...overrides,
});

function mappingError(record: PartnerRecord): MappingError {
  try {
    toJsonRecord(record);
  } catch (error) {
    if (error instanceof MappingError) return error;
    throw error;
  }
  throw new Error('expected a MappingError');
}

describe('toJsonRecord', () => {
  it('maps a PartnerRecord to the bulk task jsonRecord shape of the spec', () => {
    expect(toJsonRecord(partner())).toEqual({
      businessPartnerType: 'ORGANIZATION',
      organization: {
        nameDetails: {
          formattedOrgNameLine1: 'Muster Maschinenbau',
          formattedOrgName: 'Muster Maschinenbau GmbH',
        },
      },
      addressData: [
        {
          organizationPostalAddress: {
            country: { code: 'DE' },
            postCode: '80331',
            houseNumber: '5',
            street: { name: 'Hauptstraße' },
            primaryRegion: { code: 'BY' },
            town: { name: 'München' },
          },
        },
      ],
      identifications: [
        {
          identificationType: { code: 'DE_HRB' },
          identificationNumber: 'HRB 12345',
          country: { code: 'DE' },
        },
      ],
      taxNumbers: [{ taxNumberType: { code: 'VAT' }, taxNumber: 'DE123456789' }],
    });
  });

  it('does not repeat a legal form the name already ends with', () => {
    const mapped = toJsonRecord(partner({ names: ['Muster GmbH'] }));
    expect(mapped.organization.nameDetails.formattedOrgName).toBe('Muster GmbH');
  });

  it('accepts an identifier alone, without a name', () => {
    expect(toJsonRecord(partner({ names: [] })).identifications).toHaveLength(1);
  });

  it.each([
    [
      'no name and no identifier',
      partner({ names: [' '], identifiers: [], taxNumbers: [] }),
      'MAPPING_NO_NAME_OR_IDENTIFIER',
    ],
    ['an empty partner id', partner({ partnerId: '' }), 'MAPPING_MISSING_PARTNER_ID'],
    [
      'an unknown country code',
      partner({ addresses: [{ ...ADDRESS, country: 'XX' }] }),
      'MAPPING_INVALID_COUNTRY',
    ],
    [
      'a country name instead of a code',
      partner({ addresses: [{ ...ADDRESS, country: 'Germany' }] }),
      'MAPPING_INVALID_COUNTRY',
    ],
    [
      'an identifier country that is no code',
      partner({ identifiers: [{ type: 'LEI', value: 'X', country: 'ZZ' }] }),
      'MAPPING_INVALID_COUNTRY',
    ],
    [
      'an oversize name',
      partner({ names: ['x'.repeat(TASK_LIMITS.maxFieldLength + 1)] }),
      'MAPPING_FIELD_TOO_LONG',
    ],
    [
      'too many addresses sent',
      partner({ addresses: Array(TASK_LIMITS.maxItems + 1).fill(ADDRESS) }),
      'MAPPING_TOO_MANY_ITEMS',
    ],
  ])('rejects %s', (_what, record, code) => {
    expect(mappingError(record).code).toBe(code);
  });

  it.each([
    [
      '21 names (only the first is sent)',
      partner({ names: Array(TASK_LIMITS.maxItems + 1).fill('n') }),
      { name: 'n GmbH', addresses: 1, identifiers: 1 },
    ],
    [
      '21 addresses, 20 of them blank (left out)',
      partner({
        addresses: [
          ADDRESS,
          ...Array(TASK_LIMITS.maxItems).fill({
            ...ADDRESS,
            street: ' ',
            houseNumber: null,
            postCode: null,
            town: null,
            region: null,
            country: null,
          }),
        ],
      }),
      { name: 'Muster Maschinenbau GmbH', addresses: 1, identifiers: 1 },
    ],
    [
      '21 identifiers, 20 of them placeholders (left out)',
      partner({
        identifiers: [
          { type: 'LEI', value: 'X1', country: null },
          ...Array(TASK_LIMITS.maxItems).fill({ type: 'LEI', value: '-', country: null }),
        ],
      }),
      { name: 'Muster Maschinenbau GmbH', addresses: 1, identifiers: 1 },
    ],
    [
      'a 300-character legal form without a name (not sent)',
      partner({ names: [], legalForm: 'L'.repeat(300) }),
      { name: undefined, addresses: 1, identifiers: 1 },
    ],
  ])(
    'regression: %s was refused by a limit on values the task does not carry; now looked up',
    (_what, record, sent) => {
      const task = toJsonRecord(record);
      expect({
        name: task.organization.nameDetails.formattedOrgName,
        addresses: task.addressData.length,
        identifiers: task.identifications.length,
      }).toEqual(sent);
    },
  );

  it('names the field and the limit of an oversize value', () => {
    const error = mappingError(partner({ legalForm: 'y'.repeat(300) }));
    expect(error.details).toEqual({ path: 'legalForm', length: 300, limit: TASK_LIMITS.maxFieldLength });
  });
  it("regression: an error's path indexes the record's own list, blank items counted (it indexed the non-blank ones)", () => {
    const long = 'x'.repeat(TASK_LIMITS.maxFieldLength + 1);
    expect(mappingError(partner({ names: ['', ' ', long] })).details).toMatchObject({ path: 'names[2]' });
    const identifiers = [
      { type: 'LEI', value: ' ', country: null },
      { type: long, value: 'V-1', country: null },
    ];
    expect(mappingError(partner({ identifiers })).details).toMatchObject({ path: 'identifiers[1].type' });
    const addresses = [ADDRESS, { ...ADDRESS, country: 'Germany' }];
    expect(mappingError(partner({ addresses })).details).toEqual({ path: 'addresses[1].country' });
  });
});

describe('toJsonRecord: text, addresses and names', () => {
  const BLANK_ADDRESS = {
    street: null,
    houseNumber: null,
    postCode: ' ',
    town: null,
    region: null,
    country: null,
  };

  it('regression: a blank address was sent as an empty first address, so the real one was not the primary', () => {
    const mapped = toJsonRecord(partner({ addresses: [BLANK_ADDRESS, ADDRESS] }));
    expect(mapped.addressData).toHaveLength(1);
    expect(mapped.addressData[0]?.organizationPostalAddress.town).toEqual({ name: 'München' });
    // An error in a later address still names its place in the record's own list.
    const addresses = [BLANK_ADDRESS, { ...ADDRESS, country: 'Germany' }];
    expect(mappingError(partner({ addresses })).details).toEqual({ path: 'addresses[1].country' });
  });

  it('regression: a legal form was taken as written when the name merely ended with its letters ("Nordic Lab" + AB)', () => {
    const formatted = (name: string, legalForm: string) =>
      toJsonRecord(partner({ names: [name], legalForm })).organization.nameDetails.formattedOrgName;
    expect(formatted('Nordic Lab', 'AB')).toBe('Nordic Lab AB');
    expect(formatted('Atlas', 'AS')).toBe('Atlas AS');
    expect(formatted('Nordic Lab AB', 'AB')).toBe('Nordic Lab AB');
    expect(formatted('Muster GmbH', 'gmbh')).toBe('Muster GmbH');
    expect(formatted('GmbH', 'GmbH')).toBe('GmbH');
  });

  it('regression: a name the task does not carry (a long trade name after the legal one) dead-lettered the record as too long', () => {
    const record = partner({ names: ['Acme Tools', 'x'.repeat(TASK_LIMITS.maxFieldLength + 1)] });
    expect(toJsonRecord(record).organization.nameDetails.formattedOrgNameLine1).toBe('Acme Tools');
  });

  it('regression: the name with its legal form appended was not held to the field limit', () => {
    const name = 'x'.repeat(TASK_LIMITS.maxFieldLength);
    const error = mappingError(partner({ names: [' ', name], legalForm: 'AG' }));
    expect(error.code).toBe('MAPPING_FIELD_TOO_LONG');
    expect(error.details).toEqual({
      path: 'names[1]',
      length: TASK_LIMITS.maxFieldLength + 3,
      limit: TASK_LIMITS.maxFieldLength,
    });
  });

  it('regression: canonically equal text (NFC and NFD) gave two content hashes and two lengths', () => {
    const nfc = partner({ names: ['Müller Café'.normalize('NFC')] });
    const nfd = partner({ names: ['Müller Café'.normalize('NFD')] });
    expect(toJsonRecord(nfd)).toEqual(toJsonRecord(nfc));
    expect(contentHash(toJsonRecord(nfd))).toBe(contentHash(toJsonRecord(nfc)));
    const limit = TASK_LIMITS.maxFieldLength;
    // 256 characters as NFC, 257 UTF-16 units as NFD: within the limit either way.
    expect(() =>
      toJsonRecord(partner({ names: [`é${'x'.repeat(limit - 1)}`.normalize('NFD')], legalForm: null })),
    ).not.toThrow();
  });

  it('regression: control characters were sent as written, and a name of control characters only was looked up', () => {
    const mapped = toJsonRecord(partner({ names: ['\u0000\u0007', 'Acme\u0000Tools'], legalForm: null }));
    expect(mapped.organization.nameDetails.formattedOrgNameLine1).toBe('Acme Tools');
    expect(mappingError(partner({ names: ['\u0001'], identifiers: [], taxNumbers: [] })).code).toBe(
      'MAPPING_NO_NAME_OR_IDENTIFIER',
    );
  });

  it('regression: a blank identifier or tax number type was sent as an empty code', () => {
    const mapped = toJsonRecord(
      partner({
        identifiers: [{ type: ' ', value: 'HRB 1', country: null }],
        taxNumbers: [{ type: '', value: 'DE123456789' }],
      }),
    );
    expect(mapped.identifications).toEqual([{ identificationNumber: 'HRB 1' }]);
    expect(mapped.taxNumbers).toEqual([{ taxNumber: 'DE123456789' }]);
  });
});

describe('contentHash', () => {
  it('depends on what is looked up, not on when or where the record came from', () => {
    const a = contentHash(toJsonRecord(partner({ changedAt: 1, sourceSystem: 'ERP' })));
    const b = contentHash(toJsonRecord(partner({ changedAt: 2, sourceSystem: 'CRM' })));
    const c = contentHash(toJsonRecord(partner({ names: ['Other'] })));
    expect(a).toBe(b);
    expect(a).not.toBe(c);
  });

  it('is the hash earlier versions stored for the same record (skip-unchanged compares with it)', () => {
    const record = partner({
      names: ['', ' Muster Maschinenbau ', 'Zweitname'],
      addresses: [
        ADDRESS,
        { town: 'Berlin', street: null, houseNumber: null, postCode: null, region: null, country: null },
      ],
      identifiers: [
        { type: 'DE_HRB', value: 'HRB 12345', country: 'DE' },
        { type: 'LEI', value: ' ', country: null },
        { type: 'LEI', value: '5493001KJTIIGC8Y1R12', country: null },
      ],
    });
    // Computed by the mapping of b44714d: members in the same order, the same trimming.
    expect(contentHash(toJsonRecord(record))).toBe('Oq52C_mx_OJ9KqDOJXKHBwkf79dmqREr');
  });
});

describe('identifiers and tax numbers in another order', () => {
  // Out of order: LEI after DE_HRB, DE_STNR before VAT.
  const shuffled = partner({
    identifiers: [
      { type: 'LEI', value: '5493001KJTIIGC8Y1R12', country: null },
      { type: 'DE_HRB', value: 'HRB 12345', country: 'DE' },
    ],
    taxNumbers: [
      { type: 'VAT', value: 'DE123456789' },
      { type: 'DE_STNR', value: '143/123/45678' },
    ],
  });
  const ordered = partner({
    identifiers: shuffled.identifiers.toReversed(),
    taxNumbers: shuffled.taxNumbers.toReversed(),
  });

  it('give one task, sorted by type, then number, then country', () => {
    const task = toJsonRecord(shuffled);
    expect(task).toEqual(toJsonRecord(ordered));
    expect(task.identifications.map((id) => id.identificationType?.code)).toEqual(['DE_HRB', 'LEI']);
    expect(task.taxNumbers.map((tax) => tax.taxNumberType?.code)).toEqual(['DE_STNR', 'VAT']);
    const sameType = toJsonRecord(
      partner({
        identifiers: [
          { type: 'DE_HRB', value: 'HRB 2', country: 'DE' },
          { type: 'DE_HRB', value: 'HRB 1', country: 'DE' },
          { type: 'DE_HRB', value: 'HRB 1', country: 'AT' },
        ],
      }),
    );
    expect(sameType.identifications.map((id) => `${id.identificationNumber} ${id.country?.code}`)).toEqual([
      'HRB 1 AT',
      'HRB 1 DE',
      'HRB 2 DE',
    ]);
  });

  it('regression: a re-send with its identifiers in another order is not looked up again (one content hash)', () => {
    expect(contentHash(toJsonRecord(shuffled))).toBe(contentHash(toJsonRecord(ordered)));
    expect(contentHash(toJsonRecord({ ...ordered, identifiers: shuffled.identifiers }))).toBe(
      contentHash(toJsonRecord(ordered)),
    );
  });

  it('keep the hash earlier versions stored for a record already in that order, and name theirs for one that is not', () => {
    // Both computed by the mapping of 0154e48, which kept the record's order.
    const ofOrdered = 'F2QPDVIBHHqpEgojHn2VwAwFNAI8WUGN';
    const ofShuffled = '3g_kr-sm7z2hVXjy6cCrh7pVx88Q90Rp';
    expect(toLookupTask(ordered)).toEqual({ jsonRecord: toJsonRecord(ordered), hash: ofOrdered });
    expect(toLookupTask(shuffled)).toEqual({
      jsonRecord: toJsonRecord(ordered),
      hash: ofOrdered,
      earlierHash: ofShuffled,
    });
  });

  it('leave the addresses in their order: the first is the one the service compares', () => {
    const other = { ...ADDRESS, town: 'Augsburg', postCode: '86150' };
    const a = toJsonRecord(partner({ addresses: [ADDRESS, other] }));
    const b = toJsonRecord(partner({ addresses: [other, ADDRESS] }));
    expect(a.addressData[0]?.organizationPostalAddress.town?.name).toBe('München');
    expect(b.addressData[0]?.organizationPostalAddress.town?.name).toBe('Augsburg');
    expect(contentHash(a)).not.toBe(contentHash(b));
  });
});
