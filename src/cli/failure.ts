// How a command ends on an error: one clear line with the error's stable code, details
// for the product's own errors, a stack only for the unexpected. Messages were built
// without secrets (see the config and client redaction), so they can be printed.
import { isPartnerEnrichError } from '../errors.ts';

export function reportFailure(error: unknown): number {
  if (isPartnerEnrichError(error)) {
    console.error(`partner-enrich: ${error.code}: ${error.message}`);
    return 2;
  }
  console.error('partner-enrich: unexpected failure');
  console.error(error);
  return 1;
}
