import { PartnerEnrichError, type ErrorOptions } from '../errors.ts';

export const OBSERVABILITY_ERROR_CODES = [
  /**
   * At start: the operations endpoint (/metrics, /healthz, /readyz) cannot listen on
   * `observability.metricsHost`:`observability.metricsPort` (in use: `EADDRINUSE`, or not
   * allowed). details: host, port, systemCode.
   */
  'METRICS_LISTEN_FAILED',
] as const;

export type ObservabilityErrorCode = (typeof OBSERVABILITY_ERROR_CODES)[number];

export class ObservabilityError extends PartnerEnrichError<ObservabilityErrorCode> {
  constructor(code: ObservabilityErrorCode, message: string, options?: ErrorOptions) {
    super(code, message, { ...options, canRetry: false });
  }
}
