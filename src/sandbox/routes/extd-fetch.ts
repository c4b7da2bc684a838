// The deprecated EXTD fetch: the legacy company record always, data blocks per feature, and
// linkage (the ownership chain) on request. The record read is the organization's EXTD record
// when it has one, else the record asked for.

import type { FastifyInstance } from 'fastify';
import type { Schemas } from '../../refdata/index.ts';
import { notFound } from '../errors.ts';
import { operationRoute } from '../http/operation-route.ts';
import type { SandboxState } from '../state/sandbox-state.ts';

type ExtdFetchFeature = Schemas['ExtdFetchFeature'];

const BLOCKS: Record<ExtdFetchFeature, readonly string[]> = {
  ACTIVATE_MASTER_DATA_BASIC: ['COMPANYINFO_L1_V1'],
  ACTIVATE_MASTER_DATA_EXTENDED: [
    'COMPANYINFO_L1_V1',
    'COMPANYINFO_L2_V1',
    'HIERARCHYCONNECTIONS_L1_V1',
    'PRINCIPALSCONTACTS_L2_V2',
  ],
  ACTIVATE_MASTER_DATA_LNKG: ['HIERARCHYCONNECTIONS_L1_V1'],
};

export function registerExtdFetchRoutes(app: FastifyInstance, state: SandboxState): void {
  operationRoute(app, 'fetchExtdBusinessPartner', ({ body }) => {
    const svcId = body.svcId ?? '';
    const organization = state.dataset.organizationOf(svcId);
    if (!organization) throw notFound(`business partner ${svcId}`);
    const extdSvcId = organization.svcIds.find((id) => id.startsWith('EXTD:')) ?? svcId;
    const record = state.dataset.getRecord(extdSvcId);
    if (!record) throw notFound(`business partner ${svcId}`);
    const partner = record.businessPartner;
    const address = partner.addresses[0];
    const companyRecord = {
      companyNumber: extdSvcId.split(':')[1],
      primaryName: partner.names[0]?.value,
      legalForm: partner.legalForm?.value,
      streetAddress: address?.thoroughfares[0]?.value,
      postalCode: address?.postCodes[0]?.value,
      city: address?.localities[0]?.value,
      countryCode: address?.country.shortName,
      registrationNumbers: partner.identifiers.map((identifier) => ({
        ...identifier.type,
        value: identifier.value,
      })),
      industryCode: partner.categories[0]?.technicalKey,
      startDate: organization.foundedOn,
    };
    const relations = state.dataset.relationsOf(svcId) ?? [];
    const blocks = new Set((body.featuresOn ?? []).flatMap((feature) => BLOCKS[feature]));
    const result: Schemas['ExtdFetchResult'] = {
      svcId: record.svcId,
      companyRecord,
      dataBlocks: Object.fromEntries(
        [...blocks].map((block) => [
          block,
          block.startsWith('HIERARCHY')
            ? { relations: relations.map((relation) => ({ ...relation })) }
            : { ...companyRecord, block },
        ]),
      ),
    };
    if (body.includeLinkage) {
      const parent = relations.find((relation) => relation.typeTechnicalKey === 'PARENT');
      result.linkage = {
        parent: parent?.svcId ?? null,
        subsidiaries: relations.filter((r) => r.typeTechnicalKey === 'SUBSIDIARY').map((r) => r.svcId),
      };
    }
    return result;
  });
}
