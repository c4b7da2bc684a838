import { PartnerEnrichError } from '../errors.ts';

export const QUOTA_ERROR_CODES = [
  /** The pipeline stopped while a bulk waited for quota: nothing was consumed for it. */
  'QUOTA_GATE_CLOSED',
] as const;

export type QuotaErrorCode = (typeof QUOTA_ERROR_CODES)[number];

export class QuotaError extends PartnerEnrichError<QuotaErrorCode> {}
