// How a command ends on an error: one clear line with the error's stable code, details
// for the product's own errors, a stack only for the unexpected. Messages are built without
// secrets (the config and client redaction); a dependency's text quoted in them may not be,
// so the configuration's secrets are replaced here too.
import { inspect } from 'node:util';
import { isPartnerEnrichError } from '../errors.ts';
import { processSecrets } from '../observability/secret-redactor.ts';

export function reportFailure(error: unknown): number {
  if (isPartnerEnrichError(error)) {
    console.error(processSecrets.redact(`partner-enrich: ${error.code}: ${error.message}`));
    return 2;
  }
  console.error('partner-enrich: unexpected failure');
  console.error(processSecrets.redact(inspect(error)));
  return 1;
}
