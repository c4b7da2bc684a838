import { describe, expect, it } from 'vitest';
import { registryFailure } from '../../src/serde/registry-failure.ts';

/** An error of the registry client's shape: a status, and the request as `<method> <url>`. */
const clientError = (status: number | undefined, url = 'get http://user:pw@registry:8081/schemas/ids/7') =>
  Object.assign(new Error(`Confluent_Schema_Registry - Error, status ${status}`), { status, url });

describe('a schema registry failure', () => {
  it('is SCHEMA_REGISTRY_AUTH_FAILED for 401 and 403, the request named without its credentials', () => {
    for (const status of [401, 403]) {
      const failure = registryFailure(clientError(status), 7);
      expect(failure).toMatchObject({
        code: 'SCHEMA_REGISTRY_AUTH_FAILED',
        details: { schemaId: 7, status },
      });
      expect(failure?.message).toContain('GET http://');
      expect(failure?.message).not.toContain('pw@');
    }
  });

  it('is SCHEMA_REGISTRY_UNAVAILABLE for any other status (the client says 400 for its own transport failures)', () => {
    for (const status of [400, 500, 503])
      expect(registryFailure(clientError(status), 7)).toMatchObject({
        code: 'SCHEMA_REGISTRY_UNAVAILABLE',
        canRetry: true,
      });
  });

  it("is none of the registry's for a 404 (an unknown id) or an error without a status (what it served cannot be built)", () => {
    expect(registryFailure(clientError(404), 7)).toBeUndefined();
    expect(registryFailure(new Error('invalid Avro default'), 7)).toBeUndefined();
  });
});
