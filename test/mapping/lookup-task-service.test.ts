// The mapping against the service's answers, over HTTP to the sandbox: a record the mapping
// lets through must not be one the service refuses (INVALID_INPUT) after its task was paid.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MappingError } from '../../src/mapping/errors.ts';
import { type JsonRecord, toJsonRecord } from '../../src/mapping/lookup-task.ts';
import { waitForBulkLookup } from '../../src/refdata/index.ts';
import type { PartnerRecord } from '../../src/serde/partner-record.ts';
import { knownPartner } from '../sandbox/support/partners.ts';
import { startTestSandbox, type TestSandbox } from '../sandbox/support/sandbox-fixtures.ts';

let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox();
});
afterAll(() => sandbox.close());

const partner = (overrides: Partial<PartnerRecord>): PartnerRecord => ({
  partnerId: 'P-1',
  sourceSystem: 'ERP',
  names: [],
  legalForm: null,
  addresses: [],
  identifiers: [],
  taxNumbers: [],
  changedAt: 1,
  ...overrides,
});

/** The status code the sandbox answers for one task. */
async function answer(jsonRecord: JsonRecord): Promise<string | undefined> {
  const created = await sandbox.client.createBulkLookup({
    body: { tasks: [{ id: 't-1', businessPartner: { jsonRecord } }] },
  });
  await waitForBulkLookup(sandbox.client, created.id ?? '', { initialDelayMs: 5, maxDelayMs: 20 });
  const page = await sandbox.client.getBulkLookup({ path: { id: created.id ?? '' } });
  return page.results?.[0]?.status?.code;
}

describe('mapped tasks and the service', () => {
  it('regression: an identifier or tax number without a letter or digit ("-") was paid for and answered INVALID_INPUT', async () => {
    // What the mapping sent for such a record: the service refuses it.
    const sent: JsonRecord = {
      businessPartnerType: 'ORGANIZATION',
      organization: { nameDetails: {} },
      addressData: [],
      identifications: [{ identificationType: { code: 'LEI' }, identificationNumber: '-' }],
      taxNumbers: [{ taxNumberType: { code: 'VAT' }, taxNumber: './.' }],
    };
    expect(await answer(sent)).toBe('INVALID_INPUT');
    const record = partner({
      identifiers: [{ type: 'LEI', value: '-', country: null }],
      taxNumbers: [{ type: 'VAT', value: './.' }],
    });
    let refused: unknown;
    try {
      toJsonRecord(record);
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(MappingError);
    expect((refused as MappingError).code).toBe('MAPPING_NO_NAME_OR_IDENTIFIER');
    // With a name, the placeholder is left out and the task is answered.
    const known = knownPartner(sandbox.state, 3);
    const mapped = toJsonRecord({ ...record, names: [known.name] });
    expect(mapped.identifications).toEqual([]);
    expect(mapped.taxNumbers).toEqual([]);
    expect(await answer(mapped)).toBe('OK');
  });
});
