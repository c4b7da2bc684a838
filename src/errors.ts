// Every error the product raises on purpose is a PartnerEnrichError with a stable code
// from a closed list (see docs/ERRORS.md, kept in sync by a test). The retry decision
// travels on the error (`canRetry`) instead of being re-derived by each caller.

export interface ErrorOptions {
  cause?: unknown;
  canRetry?: boolean;
  /** Structured facts for logs and dead-letter headers; never secrets. */
  details?: Record<string, unknown>;
}

export class PartnerEnrichError<Code extends string = string> extends Error {
  readonly code: Code;
  readonly canRetry: boolean;
  readonly details: Record<string, unknown>;

  constructor(code: Code, message: string, options: ErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.canRetry = options.canRetry ?? false;
    this.details = options.details ?? {};
  }
}

export const isPartnerEnrichError = (error: unknown): error is PartnerEnrichError =>
  error instanceof PartnerEnrichError;
