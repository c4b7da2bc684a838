// Responses are checked against the document before they are sent. A broken body is produced
// without touching any route: a configuration stored straight into the state skips request
// validation, so it can hold values the document's schema forbids.

import type { FastifyReply, FastifyRequest } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildSandboxApp, type SandboxApp, type SandboxOptions } from '../../src/sandbox/index.ts';
import { validateResponse } from '../../src/sandbox/http/response-validation.ts';

const API_KEY = 'test-api-key';
let sandbox: SandboxApp | undefined;
afterEach(() => sandbox?.app.close());

function sandboxWithOutOfRangeConfiguration(options: SandboxOptions = {}): SandboxApp {
  sandbox = buildSandboxApp({ orgs: 50, apiKey: API_KEY, ...options });
  // maximum 1 and maximum 200 in the document's LookupConfigurationModel.
  sandbox.state.configurations.lookup.create(
    { id: 'out-of-range', name: 'out of range', configuration: { matchingThreshold: 2, maxCandidates: 500 } },
    'test',
  );
  return sandbox;
}

const read = (
  app: SandboxApp['app'],
  url: string,
  headers: Record<string, string> = { 'x-api-key': API_KEY },
) => app.inject({ method: 'GET', url, headers });

describe('sandbox response validation', () => {
  it('turns a body that does not fit the document into a 500 INTERNAL_ERROR naming the operation and fields', async () => {
    const { app } = sandboxWithOutOfRangeConfiguration();
    const response = await read(app, '/configurations/businesspartnerlookup/out-of-range');
    expect(response.statusCode).toBe(500);
    const body = response.json();
    expect(body).toEqual({
      code: 'INTERNAL_ERROR',
      message: expect.any(String),
      requestId: expect.any(String),
    });
    expect(body.message).toContain('getLookupConfiguration');
    expect(body.message).toContain('response.configuration.matchingThreshold (maximum)');
    expect(body.message).toContain('response.configuration.maxCandidates (maximum)');
  });

  it('leaves bodies that fit alone, error answers included', async () => {
    const { app } = sandboxWithOutOfRangeConfiguration();
    expect((await read(app, '/configurations/businesspartnerlookup/lookup-default')).statusCode).toBe(200);
    expect((await read(app, '/configurations/businesspartnerlookup/missing')).statusCode).toBe(404);
    // 401 is not in the document; its error body makes it acceptable.
    const anonymous = await read(app, '/configurations/businesspartnerlookup/lookup-default', {});
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json().code).toBe('UNAUTHORIZED');
  });

  it('skips the admin endpoints, which are not in the document', async () => {
    const { app } = sandboxWithOutOfRangeConfiguration();
    expect((await read(app, '/admin/stats', {})).statusCode).toBe(200);
  });

  it('sends the body unchecked with validateResponses off', async () => {
    const { app } = sandboxWithOutOfRangeConfiguration({ validateResponses: false });
    const response = await read(app, '/configurations/businesspartnerlookup/out-of-range');
    expect(response.statusCode).toBe(200);
    expect(response.json().configuration).toEqual({ matchingThreshold: 2, maxCandidates: 500 });
  });

  it('logs the operation, status, fields and keywords, never the values of the body', async () => {
    const logged: unknown[] = [];
    const request = {
      id: 'req-1',
      routeOptions: { config: { operation: { operationId: 'getLookupConfiguration', root: 'base' } } },
      log: { error: (...args: unknown[]) => logged.push(args) },
    } as unknown as FastifyRequest;
    let status = 200;
    const reply = {
      get statusCode() {
        return status;
      },
      code(next: number) {
        status = next;
        return this;
      },
    } as unknown as FastifyReply;
    const secret = 'secret-token-value';
    const answer = await validateResponse(request, reply, { id: 'c1', name: secret, version: secret });
    expect(status).toBe(500);
    expect(answer).toMatchObject({ code: 'INTERNAL_ERROR', requestId: 'req-1' });
    expect(logged).toEqual([
      [
        {
          operationId: 'getLookupConfiguration',
          status: 200,
          issueCount: 1,
          issues: [{ field: 'response.version', keyword: 'type' }],
        },
        'response does not fit the OpenAPI document',
      ],
    ]);
    expect(JSON.stringify([logged, answer])).not.toContain(secret);
  });
});
