import { PartnerEnrichError } from '../../errors.ts';

export const SANDBOX_MATCHING_ERROR_CODES = [
  /** Lookup options outside the spec's limits (limit, matchingThreshold, maxCandidates...). */
  'SANDBOX_INVALID_LOOKUP_OPTIONS',
  /** A startAfter cursor this matcher did not hand out. */
  'SANDBOX_INVALID_CURSOR',
  /** A query with no name, identifier or address to compare. */
  'SANDBOX_EMPTY_QUERY',
] as const;

export type SandboxMatchingErrorCode = (typeof SANDBOX_MATCHING_ERROR_CODES)[number];

/** Raised for inputs the caller must fix; retrying the same input fails the same way. */
export class SandboxMatchingError extends PartnerEnrichError<SandboxMatchingErrorCode> {}
