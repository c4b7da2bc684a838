// Lookup inputs built from the sandbox's own records, so a test knows which organization a
// query should find.

import type { Schemas } from '../../../src/refdata/index.ts';
import type { SandboxState } from '../../../src/sandbox/index.ts';

export interface KnownPartner {
  svcId: string;
  name: string;
  country: string;
  postCode: string | undefined;
  town: string | undefined;
  identifier: { value: string; type: string } | undefined;
  allSvcIds: readonly string[];
}

/** The `index`-th organization, through its first (default source) record. */
export function knownPartner(state: SandboxState, index: number): KnownPartner {
  const organization = state.dataset.organizations[index];
  const svcId = organization?.svcIds[0];
  const record = svcId === undefined ? undefined : state.dataset.getRecord(svcId);
  if (!organization || !record) throw new Error(`no organization ${index}`);
  const partner = record.businessPartner;
  const address = partner.addresses[0];
  const identifier = partner.identifiers[0];
  return {
    svcId: record.svcId,
    name: partner.names[0]?.value ?? '',
    country: address?.country.shortName ?? '',
    postCode: address?.postCodes[0]?.value,
    town: address?.localities[0]?.value,
    identifier: identifier && { value: identifier.value, type: identifier.type.technicalKey },
    allSvcIds: organization.svcIds,
  };
}

export function normalizedQuery(partner: KnownPartner): Schemas['BusinessPartnerParam'] {
  return {
    names: [{ value: partner.name }],
    addresses: [
      {
        country: { shortName: partner.country },
        ...(partner.postCode === undefined ? {} : { postCodes: [{ value: partner.postCode }] }),
        ...(partner.town === undefined ? {} : { localities: [{ value: partner.town }] }),
      },
    ],
  };
}

export function bulkTask(id: string, partner: KnownPartner): Schemas['BulkLookupTask'] {
  return {
    id,
    businessPartner: {
      jsonRecord: {
        organization: { nameDetails: { formattedOrgName: partner.name } },
        addressData: [
          {
            organizationPostalAddress: {
              country: { code: partner.country },
              ...(partner.postCode === undefined ? {} : { postCode: partner.postCode }),
              ...(partner.town === undefined ? {} : { town: { name: partner.town } }),
            },
          },
        ],
      },
    },
  };
}

/** An organization holding a record in the data source with this svcId prefix. */
export function partnerWithSource(state: SandboxState, prefix: string): { index: number; svcId: string } {
  const index = state.dataset.organizations.findIndex((organization) =>
    organization.svcIds.some((svcId) => svcId.startsWith(`${prefix}:`)),
  );
  const svcId = state.dataset.organizations[index]?.svcIds.find((id) => id.startsWith(`${prefix}:`));
  if (svcId === undefined) throw new Error(`no organization in ${prefix}`);
  return { index, svcId };
}
