// The mapping against the service's answers, over HTTP to the sandbox: a record the mapping
// lets through must not be one the service refuses (INVALID_INPUT) after its task was paid.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MappingError } from '../../src/mapping/errors.ts';
import { type JsonRecord, toJsonRecord } from '../../src/mapping/lookup-task.ts';
import { waitForBulkLookup } from '../../src/refdata/index.ts';
import type { PartnerRecord } from '../../src/serde/partner-record.ts';
import { partnerOf } from '../../src/sandbox/upstream-partners.ts';
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

/** The sandbox's results for the tasks, in their order, without their task ids. */
async function results(jsonRecords: JsonRecord[]) {
  const created = await sandbox.client.createBulkLookup({
    body: { tasks: jsonRecords.map((jsonRecord, i) => ({ id: `t-${i}`, businessPartner: { jsonRecord } })) },
  });
  await waitForBulkLookup(sandbox.client, created.id ?? '', { initialDelayMs: 5, maxDelayMs: 20 });
  const page = await sandbox.client.getBulkLookup({ path: { id: created.id ?? '' } });
  const byTask = new Map((page.results ?? []).map(({ taskId, ...result }) => [taskId, result]));
  return jsonRecords.map((_, i) => byTask.get(`t-${i}`));
}

/** The status code the sandbox answers for one task. */
const answer = async (jsonRecord: JsonRecord): Promise<string | undefined> =>
  (await results([jsonRecord]))[0]?.status?.code;

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
  it('answers the same whatever the order of identifications and tax numbers (why the task sorts them and the content hash ignores their order)', async () => {
    const organization = sandbox.state.dataset.organizations.find((o) => o.identifiers.length >= 3);
    if (!organization) throw new Error('no organization with three identifiers');
    const country = organization.address.country;
    /** Its numbers as identifiers and as tax numbers, each with `suffix` appended. */
    const task = (suffix: string): JsonRecord =>
      toJsonRecord({
        ...partnerOf(organization, 'P-1', 'ERP', 1),
        identifiers: organization.identifiers.map((id) => ({
          type: id.type,
          value: id.value + suffix,
          country,
        })),
        taxNumbers: organization.identifiers.map((id) => ({ type: id.type, value: id.value + suffix })),
      });
    const reversed = (sent: JsonRecord): JsonRecord => ({
      ...sent,
      identifications: sent.identifications.toReversed(),
      taxNumbers: sent.taxNumbers.toReversed(),
    });
    // Its own numbers (identifier matches), and every number mistyped (conflicts of the same type).
    const [own, mistyped] = [task(''), task('9')];
    const [a, b, c, d] = await results([own, reversed(own), mistyped, reversed(mistyped)]);
    expect(a?.status?.code).toBe('OK');
    expect(a?.values?.length).toBeGreaterThan(0);
    expect(b).toEqual(a);
    expect(c?.values?.length).toBeGreaterThan(0);
    expect(d).toEqual(c);
    // The two pairs score apart: they go through two paths of the matcher.
    expect(c?.values?.[0]?.score).toBeLessThan(a?.values?.[0]?.score ?? 0);
  });
});
