import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadReferenceDataDocument } from '../../src/refdata/index.ts';
import { SandboxError, buildSandboxApp } from '../../src/sandbox/index.ts';
import { TEST_ORGS, startTestSandbox, type TestSandbox } from './support/sandbox-fixtures.ts';

let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox();
});
afterAll(() => sandbox.close());

describe('sandbox server', () => {
  it('serves every operation of the OpenAPI document, of all five roots, from one address', async () => {
    const { app } = buildSandboxApp({ orgs: TEST_ORGS, seed: 7 });
    await app.ready();
    const missing = [...loadReferenceDataDocument().operations.values()].filter(
      (operation) =>
        !app.hasRoute({ method: operation.method, url: operation.path.replace(/\{([^}]+)\}/g, ':$1') }),
    );
    expect(missing.map((operation) => operation.operationId)).toEqual([]);
    await app.close();
  });

  it('listens on the port it was given (0: any free one) on 127.0.0.1', () => {
    expect(sandbox.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('answers an unknown path and a body that is not JSON with the document error body', async () => {
    const unknown = await sandbox.raw('GET', '/v9/nothing');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({
      code: 'NOT_FOUND',
      message: expect.any(String),
      requestId: expect.any(String),
    });
    const broken = await sandbox.raw('POST', '/v4/businesspartners/lookup', { body: '{"limit": ' });
    expect(broken.status).toBe(400);
    expect(broken.body).toMatchObject({ code: 'INVALID_REQUEST', field: 'body' });
  });

  it("regression: a path that is not valid percent-encoding, and a path id over 100 characters, were answered by the router's own bodies (no ErrorBody code, no request id, no authentication); now as every other request", async () => {
    const unreadable = await sandbox.raw('GET', '/v4/businesspartners/lookup/bulks/%E0%A4%A');
    expect(unreadable.status).toBe(400);
    expect(unreadable.body).toMatchObject({
      code: 'INVALID_REQUEST',
      field: 'path',
      requestId: expect.any(String),
    });
    const longId = `/v4/businesspartners/lookup/bulks/${'x'.repeat(101)}`;
    expect((await sandbox.raw('GET', longId, { anonymous: true })).status).toBe(401);
    const unknown = await sandbox.raw('GET', longId);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ requestId: expect.any(String) });
  });

  it('lists every broken member in the message and names the first', async () => {
    const response = await sandbox.raw('POST', '/v4/businesspartners/lookup', {
      body: { limit: -1, maxCandidates: 500 },
    });
    expect(response.body.field).toBe('body.limit');
    expect(response.body.message).toContain('body.maxCandidates must be <= 200');
  });

  it('refuses options outside their schema with SANDBOX_INVALID_OPTIONS', () => {
    expect(() => buildSandboxApp({ orgs: 0 })).toThrow(SandboxError);
    expect(() => buildSandboxApp({ faults: { errorRate: 1.5 } })).toThrow(/faults.errorRate/);
  });

  it('stops answering once closed', async () => {
    const other = await startTestSandbox();
    await other.close();
    await expect(fetch(`${other.url}/admin/stats`)).rejects.toThrow();
  });
});
