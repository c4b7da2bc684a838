// Public surface of the reference data client. Internals (executor, exchange, authenticator,
// token provider) stay unexported so they can change without breaking callers.

export { RefDataClient } from './client.ts';
export type { RefDataClientOptions } from './options.ts';
export type { CallOptions, OperationId, RequestInput, ResponseBody, Schemas } from './operation-types.ts';
export {
  REFDATA_ERROR_CODES,
  RefDataConfigError,
  RefDataError,
  RefDataHttpError,
  RefDataJobError,
  RefDataPagingError,
  RefDataRequestValidationError,
  RefDataTransportError,
  isRefDataError,
  type RefDataErrorCode,
} from './errors.ts';
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry-policy.ts';
export { retryChannel } from './request-executor.ts';
export {
  RequestValidator,
  getRequestValidator,
  type RequestParts,
  type RequestValidationOptions,
  type RequestValidationResult,
  type SchemaIssue,
} from './request-validator.ts';
export {
  ResponseValidator,
  getResponseValidator,
  type ResponseValidationResult,
  type ResponseValidatorOptions,
} from './response-validator.ts';
export { loadReferenceDataDocument, ROOT_NAMES, type RootName } from './openapi-document.ts';
export { parseQuotaReset, QUOTA_RESET_FORMS } from './quota-reset.ts';
export {
  iterateBulkLookupResults,
  iterateBusinessPartnerRelations,
  iterateConfigurations,
  iterateExtdLookupJobResults,
  iterateLookupMatchesV4,
  walkCursorPages,
} from './paging.ts';
export {
  POLL_DEFAULTS,
  waitForBulkLookup,
  waitForEventStoreInitializerJob,
  waitForExtdLookupJob,
  type JobProgress,
  type PollOptions,
} from './job-polling.ts';
