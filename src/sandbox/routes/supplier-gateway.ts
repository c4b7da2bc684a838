// Supplier gateway: create a record, fetch it (or the supplier view of any dataset
// organization). The minority indicator, a US reporting attribute, is added only with
// ENRICH_MINORITY_INDICATOR: Y/N from the record's Ethnicity, N/A outside the US.

import type { FastifyInstance } from 'fastify';
import type { Schemas } from '../../refdata/index.ts';
import type { Organization } from '../dataset/dataset.ts';
import { invalidRequest, notFound } from '../errors.ts';
import { operationRoute } from '../http/operation-route.ts';
import type { SandboxState } from '../state/sandbox-state.ts';
import type { SupplierGateway } from '../state/supplier-gateway.ts';

const NO_ETHNICITY = new Set(['', 'NONE', 'N/A', 'NOT APPLICABLE']);

export function registerSupplierGatewayRoutes(app: FastifyInstance, state: SandboxState): void {
  operationRoute(app, 'createSupplierGatewayRecord', ({ body }) => {
    if (body.supplierGateway === undefined) {
      throw invalidRequest('body.supplierGateway', 'body.supplierGateway is required');
    }
    const { record, replaced } = state.supplierGateway.upsert(body.supplierGateway);
    return {
      Code: replaced ? 'UPDATED' : 'CREATED',
      Message: `supplier ${record.supplierNumber} stored as ${record.svcId}`,
      Supplier: supplierOf(record.supplierGateway),
    };
  });

  operationRoute(app, 'fetchSupplierGatewayRecord', ({ body }) => {
    if (body.svcId === undefined && body.supplierNumber === undefined) {
      throw invalidRequest('body.svcId', 'svcId or supplierNumber is required');
    }
    const stored = state.supplierGateway.find(body);
    const organization = body.svcId === undefined ? undefined : state.dataset.organizationOf(body.svcId);
    const found = stored
      ? {
          svcId: stored.svcId,
          supplierGateway: stored.supplierGateway,
          minority: minorityOf(stored.supplierGateway),
        }
      : organization && {
          svcId: body.svcId,
          supplierGateway: supplierGatewayOf(organization),
          minority: organization.country === 'US' ? (organization.index % 7 === 0 ? 'Y' : 'N') : 'N/A',
        };
    if (!found) throw notFound(`supplier ${body.svcId ?? body.supplierNumber}`);
    const result: Schemas['SupplierGatewayFetchResult'] = {
      svcId: found.svcId,
      supplierGateway: found.supplierGateway,
    };
    if (body.featuresOn?.includes('ENRICH_MINORITY_INDICATOR'))
      result.minorityIndicator = { value: found.minority };
    return result;
  });
}

function minorityOf(record: SupplierGateway): string {
  if (record.Country !== undefined && !['US', 'USA'].includes(record.Country.toUpperCase())) return 'N/A';
  return NO_ETHNICITY.has((record.Ethnicity ?? '').trim().toUpperCase()) ? 'N' : 'Y';
}

function supplierGatewayOf(organization: Organization): SupplierGateway {
  const { address } = organization;
  return {
    CompanyName: `${organization.name} ${organization.legalForm.short}`,
    EIN: organization.identifiers.find((identifier) => identifier.type === 'US_EIN')?.value,
    Address: `${address.houseNumber} ${address.street}`,
    City: address.town,
    State: address.region,
    Country: address.country,
    Zip: address.postCode,
    YearEstablished: organization.foundedOn.slice(0, 4),
    Category: organization.industry,
  };
}

function supplierOf(record: SupplierGateway): Schemas['Supplier'] {
  const contact = [record.ContactFirstName, record.ContactLastName].filter(Boolean).join(' ');
  return {
    SupplierNumber: record.SupplierNumber,
    TaxID: record.EIN,
    CompanyName: record.CompanyName,
    ...(contact === '' ? {} : { ContactName: contact }),
    Address: [record.Address, record.Address2].filter(Boolean).join(', '),
    City: record.City,
    State: record.State,
    Country: record.Country,
    Zip: record.Zip,
    ZipPlus: record.ZipPlus,
    Phone: record.Phone,
    Email: record.ContactEmail,
    Duns: record.Duns,
    yearEstablished: record.YearEstablished,
    NumberOfEmployee: record.NumberOfEmployee,
    Capability: record.Capabilities,
    Status: 'ACTIVE',
    Validated: 'N',
    Categories: record.Category === undefined ? [] : [record.Category],
    Ethnicities: record.Ethnicity === undefined ? [] : [record.Ethnicity],
    Certifications: record.Certificates ?? [],
    Banks: [],
  };
}
