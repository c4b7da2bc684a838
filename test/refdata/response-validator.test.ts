import { describe, expect, it } from 'vitest';
import { getRequestValidator, getResponseValidator, ResponseValidator } from '../../src/refdata/index.ts';
import { parseReferenceDataDocument } from '../../src/refdata/openapi-document.ts';

const validator = getResponseValidator();

const finishedBulk = {
  id: 'bulk-1',
  createdAt: '2025-01-01T00:00:00.000Z',
  status: { code: 'FINISHED' },
  progress: 100,
  results: [
    {
      taskId: 't1',
      status: { code: 'OK' },
      values: [{ svcId: 'OPENREG:1', dataSource: { aleiPrefix: 'OPENREG', name: 'Open' }, score: 0.93 }],
    },
  ],
};
const errorBody = { code: 'NOT_FOUND', message: 'bulk x not found', requestId: 'req-1' };

describe('ResponseValidator', () => {
  it('compiles a response for every operation the request validator knows', () => {
    expect(validator.operationIds.sort()).toEqual(getRequestValidator().operationIds.sort());
  });

  it('passes a 200 body that fits the document', () => {
    expect(validator.validate('getBulkLookup', 200, finishedBulk)).toEqual({ valid: true, issues: [] });
    const token = { access_token: 'abc', expires_in: 300, token_type: 'Bearer' };
    expect(validator.validate('requestToken', 200, token).valid).toBe(true);
    expect(validator.validate('fetchBusinessPartnersBatchV3', 200, [{ status: 'OK' }]).valid).toBe(true);
  });

  it('reports a missing required member with its path', () => {
    const bulk = { ...finishedBulk, results: [{ status: { code: 'OK' }, values: [] }] };
    const { valid, issues } = validator.validate('getBulkLookup', 200, bulk);
    expect(valid).toBe(false);
    expect(issues).toEqual([
      expect.objectContaining({ field: 'response.results[0].taskId', keyword: 'required' }),
    ]);
    expect(validator.validate('requestToken', 200, { expires_in: 300 }).issues).toEqual([
      expect.objectContaining({ field: 'response.access_token', keyword: 'required' }),
    ]);
  });

  it('reports a wrong type, an unknown enumeration value and a broken bound with their paths', () => {
    const bulk = {
      ...finishedBulk,
      progress: 'done',
      status: { code: 'DONE' },
      results: [{ taskId: 't1', values: [{ svcId: 'OPENREG:1', score: 1.5 }] }],
    };
    const issues = validator.validate('getBulkLookup', 200, bulk).issues;
    expect(issues.map(({ field, keyword }) => [field, keyword])).toEqual(
      expect.arrayContaining([
        ['response.progress', 'type'],
        ['response.status.code', 'enum'],
        ['response.results[0].values[0].score', 'maximum'],
      ]),
    );
    expect(issues.find((issue) => issue.keyword === 'maximum')?.limit).toBe(1);
    expect(validator.validate('fetchBusinessPartnersBatchV3', 200, { status: 'OK' }).issues).toEqual([
      expect.objectContaining({ field: 'response', keyword: 'type' }),
    ]);
  });

  it('checks documented error statuses, ranges included, against the error body', () => {
    expect(validator.validate('getBulkLookup', 404, errorBody).valid).toBe(true);
    expect(
      validator.validate('getBulkLookup', 503, { ...errorBody, code: 'INJECTED_SERVER_ERROR' }).valid,
    ).toBe(true);
    expect(validator.validate('getBulkLookup', 400, { message: 'bad' }).issues).toEqual([
      expect.objectContaining({ field: 'response.code', keyword: 'required' }),
    ]);
  });

  it('accepts an undocumented error status only with the error body', () => {
    expect(validator.validate('getBulkLookup', 401, { code: 'UNAUTHORIZED', message: 'no key' }).valid).toBe(
      true,
    );
    const issues = validator.validate('getBulkLookup', 401, { error: 'Unauthorized' }).issues;
    expect(issues.map(({ field, keyword }) => [field, keyword])).toEqual([
      ['status', 'status'],
      ['response.code', 'required'],
      ['response.message', 'required'],
    ]);
  });

  it('reports an undocumented success status whatever its body', () => {
    expect(validator.validate('getBulkLookup', 201, finishedBulk).issues).toEqual([
      {
        field: 'status',
        keyword: 'status',
        message: 'status 201 is not documented for getBulkLookup',
        limit: 201,
      },
    ]);
  });

  it('refuses an operation the document does not have', () => {
    expect(() => validator.validate('noSuchOperation', 200, {})).toThrow(RangeError);
  });

  it('matches the exact status first, then its range, then default; a response without JSON body passes', () => {
    const document = parseReferenceDataDocument(`
paths:
  /things:
    delete:
      operationId: deleteThings
      x-root: base
      x-safe-to-retry: false
      responses:
        '204': { description: No content. }
        '404':
          description: Not found.
          content: { application/json: { schema: { type: object, required: [gone] } } }
        4xx:
          description: Client error.
          content: { application/problem+json: { schema: { $ref: '#/components/schemas/ErrorBody' } } }
        default:
          description: Anything else.
          content: { application/json: { schema: { type: string } } }
components:
  schemas:
    ErrorBody: { type: object, required: [code, message] }
`);
    const own = new ResponseValidator(document);
    expect(own.validate('deleteThings', 204, undefined).valid).toBe(true);
    expect(own.validate('deleteThings', 404, { gone: true }).valid).toBe(true);
    expect(own.validate('deleteThings', 409, { gone: true }).issues[0]?.field).toBe('response.code');
    expect(own.validate('deleteThings', 500, 'oops').valid).toBe(true);
    expect(own.validate('deleteThings', 200, {}).issues[0]?.keyword).toBe('type');
  });

  it('fails at construction on a response schema keyword it does not know', () => {
    const document = parseReferenceDataDocument(`
paths:
  /things:
    get:
      operationId: getThings
      x-root: base
      x-safe-to-retry: true
      responses:
        '200':
          description: Things.
          content: { application/json: { schema: { type: string, maxLenght: 3 } } }
components:
  schemas:
    ErrorBody: { type: object }
`);
    expect(() => new ResponseValidator(document)).toThrow(/maxLenght/);
  });
});
