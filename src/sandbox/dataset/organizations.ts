import type { NameProfile } from '../matching/profile.ts';
import type { CountryCode, CountryProfile, LegalFormSpec } from './countries/index.ts';
import type { OrganizationIdentifier, UniqueIdentifiers } from './identifiers.ts';
import { legalEntityIdentifier } from './identifiers.ts';
import { UniqueNames } from './names.ts';
import { nationalIdentifiers } from './national-identifiers.ts';
import type { Random } from './random.ts';

export interface OrganizationAddress {
  readonly street: string;
  readonly houseNumber: string;
  readonly postCode: string;
  readonly town: string;
  /** ISO 3166-2 subdivision code. */
  readonly region: string;
  readonly country: CountryCode;
}

/** What the generator knows about an organization before deciding where it is listed. */
export interface OrganizationFacts {
  readonly country: CountryCode;
  /** Name without legal form, e.g. "Müller Logistik". */
  readonly name: string;
  readonly legalForm: Pick<LegalFormSpec, 'short' | 'long'>;
  /** NACE Rev. 2 section letter. */
  readonly industry: string;
  readonly address: OrganizationAddress;
  readonly identifiers: readonly OrganizationIdentifier[];
  /** ISO date. */
  readonly foundedOn: string;
  /** Whether the address prints the house number first ("12 Rue de la Paix"). */
  readonly numberBeforeStreet: boolean;
}

const LEI_SHARE = 0.2;
const FOUNDED_FROM = Date.UTC(1950, 0, 1);
const FOUNDED_UNTIL = Date.UTC(2023, 11, 31);
const DAY = 86_400_000;

export interface Organization extends OrganizationFacts {
  readonly index: number;
  /** ORG-0000001 for the first organization. */
  readonly id: string;
  /** Its records, one per data source listing it; the first is in a source searched by default. */
  readonly svcIds: readonly string[];
}

/** An organization being built: the dataset still adds provider identifiers and its svcIds. */
export interface OrganizationDraft {
  readonly organization: Organization;
  /** The organization's own arrays, still open for additions. */
  readonly identifiers: OrganizationIdentifier[];
  readonly svcIds: string[];
  /** The matcher's normalisation of the name without legal form, computed for the uniqueness check. */
  readonly coreName: NameProfile;
}

// One shared view per legal form, without the generator's weights.
const LEGAL_FORM_VIEWS = new Map<LegalFormSpec, Pick<LegalFormSpec, 'short' | 'long'>>();

function legalFormView(spec: LegalFormSpec): Pick<LegalFormSpec, 'short' | 'long'> {
  let view = LEGAL_FORM_VIEWS.get(spec);
  if (view === undefined)
    LEGAL_FORM_VIEWS.set(spec, (view = Object.freeze({ short: spec.short, long: spec.long })));
  return view;
}

/** Generates organizations of a country: unique name, address, national identifiers. */
export class OrganizationFactory {
  readonly #random: Random;
  readonly #unique: UniqueIdentifiers;
  readonly #names = new UniqueNames();

  constructor(random: Random, unique: UniqueIdentifiers) {
    this.#random = random;
    this.#unique = unique;
  }

  create(profile: CountryProfile, index: number): OrganizationDraft {
    const random = this.#random;
    const legalForm = random.weighted(profile.legalForms);
    const town = random.pick(profile.towns);
    const name = this.#names.generate(profile, town.name, random);
    const street = random
      .weighted(profile.streetTemplates)
      .template.replace('{root}', random.pick(profile.streetRoots));
    const identifiers = nationalIdentifiers(profile.code, { random, unique: this.#unique, legalForm, town });
    if (random.chance(LEI_SHARE)) identifiers.push(legalEntityIdentifier(random, this.#unique));
    const svcIds: string[] = [];
    const organization: Organization = {
      index,
      id: `ORG-${String(index + 1).padStart(7, '0')}`,
      country: profile.code,
      name: name.name,
      legalForm: legalFormView(legalForm),
      industry: name.industry,
      address: {
        street,
        houseNumber: profile.houseNumber(random),
        postCode: profile.postCode(random, town),
        town: town.name,
        region: town.region,
        country: profile.code,
      },
      identifiers,
      foundedOn: new Date(FOUNDED_FROM + random.int((FOUNDED_UNTIL - FOUNDED_FROM) / DAY) * DAY)
        .toISOString()
        .slice(0, 10),
      numberBeforeStreet: profile.numberBeforeStreet,
      svcIds,
    };
    return { organization, identifiers, svcIds, coreName: name.normalized };
  }
}
