// Typed client of the reference data service and its related APIs: one method per operation of
// schemas/openapi/reference-data.yaml, named by its operationId. The class `implements` a type
// derived from the generated operation list, so adding an operation to the document fails the
// type check until the client has a method for it.

import { Authenticator } from './authenticator.ts';
import { loadReferenceDataDocument } from './openapi-document.ts';
import type { CallOptions, OperationArgs, OperationId, ResponseBody } from './operation-types.ts';
import { resolveClientOptions, type RefDataClientOptions } from './options.ts';
import { Redactor, basicCredentials, rotatingSecret } from '../observability/secret-redactor.ts';
import { RequestExecutor } from './request-executor.ts';
import { getRequestValidator, type RequestParts } from './request-validator.ts';
import { ClientCredentialsTokenProvider } from './token-provider.ts';
import { RefDataError } from './errors.ts';

/**
 * Read to try the credentials: the nil UUID, of the shape services give bulk ids and never
 * given to one.
 */
const CREDENTIAL_CHECK_BULK_ID = '00000000-0000-0000-0000-000000000000';

type OperationMethods = {
  [Op in OperationId]: (...args: OperationArgs<Op>) => Promise<ResponseBody<Op>>;
};

export class RefDataClient implements Omit<OperationMethods, 'requestToken'> {
  readonly #executor: RequestExecutor;
  readonly #tokens: ClientCredentialsTokenProvider | undefined;

  constructor(clientOptions: RefDataClientOptions) {
    const options = resolveClientOptions(clientOptions);
    const { apiKey, clientCredentials: client, dataExchangeBasicAuth: basic } = options.credentials;
    const redactor = new Redactor([
      apiKey,
      client?.clientSecret,
      client && basicCredentials(client.clientId, client.clientSecret),
      basic?.password,
      basic && basicCredentials(basic.username, basic.password),
    ]);
    this.#tokens =
      client &&
      new ClientCredentialsTokenProvider({
        requestToken: () => this.requestToken(),
        now: options.now,
        refreshMarginMs: options.tokenRefreshMarginMs,
        // The token in hand still serves while its refresh fails, as long as a request sent
        // with it reaches the service well before it expires.
        usableForMs: options.tokenRefreshMarginMs / 3,
        ...(options.onTokenRefreshFailed ? { onRefreshFailed: options.onTokenRefreshFailed } : {}),
        onToken: rotatingSecret(redactor),
      });
    this.#executor = new RequestExecutor({
      options,
      document: loadReferenceDataDocument,
      validator: getRequestValidator,
      authenticator: new Authenticator(options.credentials, this.#tokens),
      redactor,
    });
  }

  #call<Op extends OperationId>(
    operationId: Op,
    [input, options]: OperationArgs<Op>,
  ): Promise<ResponseBody<Op>> {
    return this.#executor.execute(operationId, input as RequestParts | undefined, options) as Promise<
      ResponseBody<Op>
    >;
  }

  /**
   * The credentials tried before any work: refused ones throw REFDATA_AUTH_FAILED. With client
   * credentials the bearer token is asked for now and kept for the requests that follow. Then a
   * bulk lookup that cannot exist is read: the one permission every lookup needs, nothing
   * consumed, and its 404 says the API key (or token) was accepted, where a 403 says it was not.
   */
  async authenticate(options?: CallOptions): Promise<void> {
    await this.#tokens?.getToken();
    try {
      // Not validated: the check runs at every start of `run`, before it is ready, and the
      // validator's load and compile took about a tenth of a second of its start-up CPU
      // (docs/CONTAINER.md, start-up of `run`).
      await this.#executor.execute(
        'getBulkLookup',
        { path: { id: CREDENTIAL_CHECK_BULK_ID } },
        options,
        undefined,
        true,
      );
    } catch (error) {
      if (!(error instanceof RefDataError && error.code === 'REFDATA_NOT_FOUND')) throw error;
    }
  }

  /** A new token from the issuer, bypassing the cache (the client caches and refreshes on its own). */
  requestToken(options?: CallOptions): Promise<ResponseBody<'requestToken'>> {
    return this.#call('requestToken', [{ body: { grant_type: 'client_credentials' } }, options]);
  }

  // Business partners, version 3
  fetchBusinessPartnerV3(...args: OperationArgs<'fetchBusinessPartnerV3'>) {
    return this.#call('fetchBusinessPartnerV3', args);
  }
  fetchBusinessPartnersBatchV3(...args: OperationArgs<'fetchBusinessPartnersBatchV3'>) {
    return this.#call('fetchBusinessPartnersBatchV3', args);
  }
  fetchBusinessPartnerRelationsV3(...args: OperationArgs<'fetchBusinessPartnerRelationsV3'>) {
    return this.#call('fetchBusinessPartnerRelationsV3', args);
  }
  lookupBusinessPartnersSimpleV3(...args: OperationArgs<'lookupBusinessPartnersSimpleV3'>) {
    return this.#call('lookupBusinessPartnersSimpleV3', args);
  }
  lookupBusinessPartnersV3(...args: OperationArgs<'lookupBusinessPartnersV3'>) {
    return this.#call('lookupBusinessPartnersV3', args);
  }
  searchBusinessPartnersV3(...args: OperationArgs<'searchBusinessPartnersV3'>) {
    return this.#call('searchBusinessPartnersV3', args);
  }
  createGoldenRecordV3(...args: OperationArgs<'createGoldenRecordV3'>) {
    return this.#call('createGoldenRecordV3', args);
  }

  // Supplier gateway and EXTD (no version prefix)
  createSupplierGatewayRecord(...args: OperationArgs<'createSupplierGatewayRecord'>) {
    return this.#call('createSupplierGatewayRecord', args);
  }
  fetchSupplierGatewayRecord(...args: OperationArgs<'fetchSupplierGatewayRecord'>) {
    return this.#call('fetchSupplierGatewayRecord', args);
  }
  /** @deprecated The service deprecates `/extd/businesspartners/fetch`. */
  fetchExtdBusinessPartner(...args: OperationArgs<'fetchExtdBusinessPartner'>) {
    return this.#call('fetchExtdBusinessPartner', args);
  }
  createExtdLookupJob(...args: OperationArgs<'createExtdLookupJob'>) {
    return this.#call('createExtdLookupJob', args);
  }
  getExtdLookupJob(...args: OperationArgs<'getExtdLookupJob'>) {
    return this.#call('getExtdLookupJob', args);
  }
  listExtdLookupJobResults(...args: OperationArgs<'listExtdLookupJobResults'>) {
    return this.#call('listExtdLookupJobResults', args);
  }

  // Business partners, version 4
  lookupBusinessPartnersV4(...args: OperationArgs<'lookupBusinessPartnersV4'>) {
    return this.#call('lookupBusinessPartnersV4', args);
  }
  fetchBusinessPartnerV4(...args: OperationArgs<'fetchBusinessPartnerV4'>) {
    return this.#call('fetchBusinessPartnerV4', args);
  }
  createBulkLookup(...args: OperationArgs<'createBulkLookup'>) {
    return this.#call('createBulkLookup', args);
  }
  getBulkLookup(...args: OperationArgs<'getBulkLookup'>) {
    return this.#call('getBulkLookup', args);
  }
  /**
   * getBulkLookup with the answer's body given to `read` instead of parsed whole (a result page
   * mapped as it is read: src/bulk/bulk-page-reader.ts); a body `read` throws on is
   * REFDATA_INVALID_RESPONSE. Validation, retries and time-outs as getBulkLookup.
   */
  readBulkLookup<T>(
    read: (body: Buffer) => T,
    ...[input, options]: OperationArgs<'getBulkLookup'>
  ): Promise<T> {
    return this.#executor.execute('getBulkLookup', input as RequestParts, options, read) as Promise<T>;
  }

  // Configurations
  listFetchConfigurations(...args: OperationArgs<'listFetchConfigurations'>) {
    return this.#call('listFetchConfigurations', args);
  }
  createFetchConfiguration(...args: OperationArgs<'createFetchConfiguration'>) {
    return this.#call('createFetchConfiguration', args);
  }
  getFetchConfiguration(...args: OperationArgs<'getFetchConfiguration'>) {
    return this.#call('getFetchConfiguration', args);
  }
  updateFetchConfiguration(...args: OperationArgs<'updateFetchConfiguration'>) {
    return this.#call('updateFetchConfiguration', args);
  }
  deleteFetchConfiguration(...args: OperationArgs<'deleteFetchConfiguration'>) {
    return this.#call('deleteFetchConfiguration', args);
  }
  getFetchConfigurationVersion(...args: OperationArgs<'getFetchConfigurationVersion'>) {
    return this.#call('getFetchConfigurationVersion', args);
  }
  listLookupConfigurations(...args: OperationArgs<'listLookupConfigurations'>) {
    return this.#call('listLookupConfigurations', args);
  }
  getLookupConfiguration(...args: OperationArgs<'getLookupConfiguration'>) {
    return this.#call('getLookupConfiguration', args);
  }
  updateLookupConfiguration(...args: OperationArgs<'updateLookupConfiguration'>) {
    return this.#call('updateLookupConfiguration', args);
  }
  deleteLookupConfiguration(...args: OperationArgs<'deleteLookupConfiguration'>) {
    return this.#call('deleteLookupConfiguration', args);
  }
  getLookupConfigurationVersion(...args: OperationArgs<'getLookupConfigurationVersion'>) {
    return this.#call('getLookupConfigurationVersion', args);
  }

  // Processing logs
  getOverlapLogResults(...args: OperationArgs<'getOverlapLogResults'>) {
    return this.#call('getOverlapLogResults', args);
  }

  // Data exchange API
  createEventStoreInitializerJob(...args: OperationArgs<'createEventStoreInitializerJob'>) {
    return this.#call('createEventStoreInitializerJob', args);
  }
  getEventStoreInitializerJob(...args: OperationArgs<'getEventStoreInitializerJob'>) {
    return this.#call('getEventStoreInitializerJob', args);
  }

  // Identity API
  upsertRateLimitQuotas(...args: OperationArgs<'upsertRateLimitQuotas'>) {
    return this.#call('upsertRateLimitQuotas', args);
  }
  listRateLimitQuotas(...args: OperationArgs<'listRateLimitQuotas'>) {
    return this.#call('listRateLimitQuotas', args);
  }

  // Service usage API
  getQuotaUsage(...args: OperationArgs<'getQuotaUsage'>) {
    return this.#call('getQuotaUsage', args);
  }
  consumeQuota(...args: OperationArgs<'consumeQuota'>) {
    return this.#call('consumeQuota', args);
  }
}
