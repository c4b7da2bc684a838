import type { LookupFeature } from '../matching/features.ts';
import type { CountryCode } from './countries/index.ts';
import type { IdentifierKind } from './identifiers.ts';

export type DataSourceCategory = 'OPEN' | 'FREE' | 'COMMERCIAL';

/** Fields a record may lack; a record's `omitted` mask combines these bits. */
export const FIELD = {
  LEGAL_FORM: 1,
  IDENTIFIERS: 2,
  STREET: 4,
  HOUSE_NUMBER: 8,
  POST_CODE: 16,
  TOWN: 32,
  REGION: 64,
} as const;

export type OmittableField = keyof typeof FIELD;

/** How a source prints what it holds; the facts are the organization's, the form is the source's. */
export interface Presentation {
  /** "MÜLLER LOGISTIK GMBH", as VAT registers and some providers print names. */
  readonly upperCase?: boolean;
  /** Legal form written out: "Müller Logistik Gesellschaft mit beschränkter Haftung". */
  readonly longLegalForm?: boolean;
  /** Name without legal form, as a places directory lists a business. */
  readonly withoutLegalForm?: boolean;
  /** House number inside the street line ("Hauptstraße 12"), no separate number. */
  readonly streetLine?: boolean;
}

export interface DataSource {
  readonly id: string;
  /** svcId prefix: records are `<prefix>:<value>`. */
  readonly prefix: string;
  readonly name: string;
  readonly category: DataSourceCategory;
  /** Lookup feature that adds this source to lookups; undefined when it is searched by default. */
  readonly activatedBy: LookupFeature | undefined;
  /** Organizational data mirror holding the records; undefined for the service's own sources. */
  readonly storageId?: string;
  /** Countries covered; undefined for all. */
  readonly countries?: readonly CountryCode[];
  /** Only organizations holding an identifier of this kind are in the source (a VAT register...). */
  readonly requires?: IdentifierKind;
  readonly identifierKinds: readonly IdentifierKind[];
  readonly presentation: Presentation;
  /** Fields this source never has. */
  readonly neverHas: readonly OmittableField[];
  /** Chance that a record of this source lacks a field it could have. */
  readonly gaps: Readonly<Partial<Record<OmittableField, number>>>;
  /** Relative chance of being one of an organization's additional sources. */
  readonly coverage: number;
}

/** Sources searched without any feature; every organization is in at least one of them. */
export const DEFAULT_SOURCE_IDS = ['OPENREG', 'LEIREG', 'VATREG'] as const;

export const DATA_SOURCES: readonly DataSource[] = [
  {
    id: 'OPENREG',
    prefix: 'OPENREG',
    name: 'Open company registers',
    category: 'OPEN',
    activatedBy: undefined,
    identifierKinds: ['REGISTER', 'TAX'],
    presentation: {},
    neverHas: [],
    gaps: { REGION: 0.2, HOUSE_NUMBER: 0.05 },
    coverage: 30,
  },
  {
    id: 'LEIREG',
    prefix: 'LEIREG',
    name: 'Legal entity identifier index',
    category: 'OPEN',
    activatedBy: undefined,
    requires: 'LEI',
    identifierKinds: ['LEI', 'REGISTER'],
    presentation: {},
    neverHas: [],
    gaps: { REGION: 0.1 },
    coverage: 40,
  },
  {
    id: 'VATREG',
    prefix: 'VATREG',
    name: 'VAT number registers',
    category: 'FREE',
    activatedBy: undefined,
    requires: 'VAT',
    identifierKinds: ['VAT'],
    presentation: { upperCase: true, streetLine: true },
    neverHas: ['LEGAL_FORM', 'REGION'],
    gaps: { POST_CODE: 0.1 },
    coverage: 30,
  },
  {
    id: 'EXTD',
    prefix: 'EXTD',
    name: 'External provider D',
    category: 'COMMERCIAL',
    activatedBy: 'ACTIVATE_DATASOURCE_EXTD',
    identifierKinds: ['EXTD', 'VAT', 'REGISTER', 'LEI'],
    presentation: { upperCase: true },
    neverHas: [],
    gaps: {},
    coverage: 25,
  },
  {
    id: 'EXTB',
    prefix: 'EXTB',
    name: 'External provider B',
    category: 'COMMERCIAL',
    activatedBy: 'ACTIVATE_DATASOURCE_EXTB',
    identifierKinds: ['EXTB', 'REGISTER', 'LEI', 'VAT'],
    presentation: { longLegalForm: true },
    neverHas: [],
    gaps: { REGION: 0.1 },
    coverage: 15,
  },
  {
    id: 'SVCPOOL',
    prefix: 'SVCPOOL',
    name: 'Community data pool',
    category: 'FREE',
    activatedBy: 'ACTIVATE_DATASOURCE_SVC_POOL',
    identifierKinds: ['VAT', 'REGISTER'],
    presentation: {},
    neverHas: [],
    gaps: { HOUSE_NUMBER: 0.3, REGION: 0.5, POST_CODE: 0.15, IDENTIFIERS: 0.3 },
    coverage: 15,
  },
  {
    id: 'BZST',
    prefix: 'BZST',
    name: 'Federal tax office VAT confirmation',
    category: 'OPEN',
    activatedBy: 'ACTIVATE_DATASOURCE_BZST',
    countries: ['DE'],
    requires: 'VAT',
    identifierKinds: ['VAT'],
    presentation: { upperCase: true },
    neverHas: ['LEGAL_FORM', 'STREET', 'HOUSE_NUMBER', 'REGION'],
    gaps: {},
    coverage: 10,
  },
  {
    id: 'GEOPLACES',
    prefix: 'GEOPLACES',
    name: 'Places directory',
    category: 'OPEN',
    activatedBy: 'ACTIVATE_DATASOURCE_GEOPLACES',
    identifierKinds: [],
    presentation: { withoutLegalForm: true },
    neverHas: ['LEGAL_FORM', 'IDENTIFIERS'],
    gaps: { REGION: 0.5 },
    coverage: 20,
  },
  {
    id: 'NLBR',
    prefix: 'NLBR',
    name: 'Netherlands business register',
    category: 'COMMERCIAL',
    activatedBy: 'ACTIVATE_DATASOURCE_NLBR',
    countries: ['NL'],
    identifierKinds: ['REGISTER'],
    presentation: {},
    neverHas: [],
    gaps: {},
    coverage: 25,
  },
  {
    id: 'ERP',
    prefix: 'ERP',
    name: 'ERP customer master mirror',
    category: 'FREE',
    activatedBy: 'ACTIVATE_DATASOURCE_STORAGES',
    storageId: 'erp-customers',
    identifierKinds: ['VAT', 'TAX'],
    presentation: {},
    neverHas: [],
    gaps: { HOUSE_NUMBER: 0.2, REGION: 0.6, IDENTIFIERS: 0.3 },
    coverage: 6,
  },
  {
    id: 'SRM',
    prefix: 'SRM',
    name: 'Supplier master mirror',
    category: 'FREE',
    activatedBy: 'ACTIVATE_DATASOURCE_STORAGES',
    storageId: 'srm-suppliers',
    identifierKinds: ['VAT', 'REGISTER'],
    presentation: {},
    neverHas: [],
    gaps: { REGION: 0.5 },
    coverage: 6,
  },
];

const BY_ID = new Map(DATA_SOURCES.map((source) => [source.id, source]));

export function dataSourceById(id: string): DataSource | undefined {
  return BY_ID.get(id);
}
