import { PartnerEnrichError } from '../../errors.ts';

export const SANDBOX_DATASET_ERROR_CODES = [
  /** generateDataset options out of range (organization count, seed). */
  'SANDBOX_INVALID_DATASET_OPTIONS',
] as const;

export type SandboxDatasetErrorCode = (typeof SANDBOX_DATASET_ERROR_CODES)[number];

export class SandboxDatasetError extends PartnerEnrichError<SandboxDatasetErrorCode> {}
