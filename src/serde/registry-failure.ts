// What a failure of the schema registry client says: the credentials refused, the registry not
// answering, or neither (an id the registry does not know, or what it served cannot be built):
// the first two are the registry's, whatever record asked.
import { redactUrl } from '../config/index.ts';
import { SerdeError } from './errors.ts';

/**
 * SCHEMA_REGISTRY_AUTH_FAILED (401, 403) or SCHEMA_REGISTRY_UNAVAILABLE (any other status: the
 * client reports its own transport failures and time-outs as 400); undefined for a 404 and for
 * an error without a status (from building what the registry served).
 */
export function registryFailure(error: unknown, schemaId: number | undefined): SerdeError | undefined {
  const { status, url } = error as { status?: unknown; url?: unknown };
  if (status === 401 || status === 403) {
    // The client's error names the request as `<method> <url>`; the URL is shown without credentials.
    const request = typeof url === 'string' ? /^(\S+) (.*)$/.exec(url) : null;
    const asked = request
      ? ` on ${(request[1] as string).toUpperCase()} ${redactUrl(request[2] as string)}`
      : '';
    return new SerdeError(
      'SCHEMA_REGISTRY_AUTH_FAILED',
      `schema registry refused the credentials (HTTP ${status})${asked}: ${(error as Error).message}`,
      { cause: error, details: { schemaId, status } },
    );
  }
  if (typeof status !== 'number' || status === 404) return undefined;
  return new SerdeError('SCHEMA_REGISTRY_UNAVAILABLE', `schema registry: ${(error as Error).message}`, {
    cause: error,
  });
}
