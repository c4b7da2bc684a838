// The matcher reports a caller's mistake with SandboxMatchingError; over HTTP that is a 400
// naming the request member at fault.

import { SandboxMatchingError } from '../matching/errors.ts';
import { invalidRequest, type SandboxHttpError } from '../errors.ts';

/**
 * Runs `match`, turning the matcher's input errors into 400 answers. `where` prefixes the
 * option fields; `queryField` is the member that held the query.
 */
export function asBadRequest<Result>(
  match: () => Result,
  where = 'body',
  queryField = `${where}.businessPartner`,
): Result {
  try {
    return match();
  } catch (error) {
    if (error instanceof SandboxMatchingError) throw badRequestOf(error, where, queryField);
    throw error;
  }
}

function badRequestOf(error: SandboxMatchingError, where: string, queryField: string): SandboxHttpError {
  switch (error.code) {
    case 'SANDBOX_INVALID_CURSOR':
      return invalidRequest(`${where}.startAfter`, error.message);
    case 'SANDBOX_EMPTY_QUERY':
      return invalidRequest(queryField, error.message);
    case 'SANDBOX_INVALID_LOOKUP_OPTIONS': {
      const [issue] = (error.details.issues ?? []) as { path?: string }[];
      return invalidRequest(`${where}${issue?.path ? `.${issue.path}` : ''}`, error.message);
    }
  }
}
