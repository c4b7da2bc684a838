import type { NameProfile } from '../matching/profile.ts';
import { normalizeNameWithoutLegalForm } from '../matching/profile.ts';
import type { CountryCode, CountryProfile, LegalFormSpec } from './countries/index.ts';
import type { OrganizationIdentifier, UniqueIdentifiers } from './identifiers.ts';
import { legalEntityIdentifier, nationalIdentifiers } from './identifiers.ts';
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
/** Attempts at a fresh name before a numeral is appended to make it unique. */
const NAME_ATTEMPTS = 40;
const NUMERALS = ['II', 'III', 'IV', 'V', 'VI', 'VII', 'VIII', 'IX', 'X'];

interface CoreName {
  readonly name: string;
  readonly industry: string;
}

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
  if (view === undefined) LEGAL_FORM_VIEWS.set(spec, (view = Object.freeze({ short: spec.short, long: spec.long })));
  return view;
}

function brand(profile: CountryProfile, random: Random): string {
  return random.pick(profile.brandPrefixes) + random.pick(profile.brandSuffixes);
}

function surnamePair(profile: CountryProfile, random: Random): string {
  const first = random.pick(profile.surnames);
  let second = random.pick(profile.surnames);
  while (second === first) second = random.pick(profile.surnames);
  return `${first} ${random.pick(profile.conjunctions)} ${second}`;
}

// Weights follow each pattern's number of distinct names, so that drawing a name that is
// already taken stays rare even at 100,000 organizations.
const NAME_PATTERNS: readonly { weight: number; make: (p: CountryProfile, r: Random, town: string) => CoreName }[] = [
  { weight: 12, make: (p, r) => industryName(r.pick(p.surnames), p, r) },
  { weight: 12, make: (p, r) => ({ name: surnamePair(p, r), industry: r.pick(p.industries).nace }) },
  { weight: 30, make: (p, r) => industryName(brand(p, r), p, r) },
  { weight: 3, make: (p, r) => ({ name: brand(p, r), industry: r.pick(p.industries).nace }) },
  { weight: 2, make: (p, r) => ({ name: p.familyTemplate.replace('{surname}', r.pick(p.surnames)), industry: 'G' }) },
  { weight: 41, make: (p, r, town) => industryName(r.pick(p.surnames), p, r, town) },
];

function industryName(head: string, profile: CountryProfile, random: Random, town?: string): CoreName {
  const industry = random.pick(profile.industries);
  return { name: town === undefined ? `${head} ${industry.word}` : `${head} ${industry.word} ${town}`, industry: industry.nace };
}

/**
 * Generates organizations whose names differ after the matcher's normalisation, per country:
 * two organizations the matcher could not tell apart by name would make the benchmark's
 * ground truth ambiguous.
 */
export class OrganizationFactory {
  readonly #random: Random;
  readonly #unique: UniqueIdentifiers;
  readonly #takenNames = new Set<string>();

  constructor(random: Random, unique: UniqueIdentifiers) {
    this.#random = random;
    this.#unique = unique;
  }

  create(profile: CountryProfile, index: number): OrganizationDraft {
    const random = this.#random;
    const legalForm = random.weighted(profile.legalForms);
    const town = random.pick(profile.towns);
    const { core, normalized } = this.#uniqueName(profile, town.name);
    const street = random.weighted(profile.streetTemplates).template.replace('{root}', random.pick(profile.streetRoots));
    const identifiers = nationalIdentifiers(profile.code, { random, unique: this.#unique, legalForm, town });
    if (random.chance(LEI_SHARE)) identifiers.push(legalEntityIdentifier(random, this.#unique));
    const svcIds: string[] = [];
    const organization: Organization = {
      index,
      id: `ORG-${String(index + 1).padStart(7, '0')}`,
      country: profile.code,
      name: core.name,
      legalForm: legalFormView(legalForm),
      industry: core.industry,
      address: {
        street,
        houseNumber: profile.houseNumber(random),
        postCode: profile.postCode(random, town),
        town: town.name,
        region: town.region,
        country: profile.code,
      },
      identifiers,
      foundedOn: new Date(FOUNDED_FROM + random.int((FOUNDED_UNTIL - FOUNDED_FROM) / DAY) * DAY).toISOString().slice(0, 10),
      numberBeforeStreet: profile.numberBeforeStreet,
      svcIds,
    };
    return { organization, identifiers, svcIds, coreName: normalized };
  }

  /** Whether a name (without legal form) is already used in `country`. */
  isTaken(country: CountryCode, name: string): boolean {
    return this.#takenNames.has(nameKey(country, normalizeNameWithoutLegalForm(name)));
  }

  #uniqueName(profile: CountryProfile, town: string): { core: CoreName; normalized: NameProfile } {
    let candidate: CoreName = { name: '', industry: 'G' };
    for (let attempt = 0; attempt < NAME_ATTEMPTS; attempt++) {
      candidate = this.#random.weighted(NAME_PATTERNS).make(profile, this.#random, town);
      const normalized = this.#claim(profile.code, candidate.name);
      if (normalized !== undefined) return { core: candidate, normalized };
    }
    // The country's name space is crowded: number the name, as registers do with successors.
    for (const suffix of [...NUMERALS, String(this.#takenNames.size)]) {
      const numbered = { ...candidate, name: `${candidate.name} ${suffix}` };
      const normalized = this.#claim(profile.code, numbered.name);
      if (normalized !== undefined) return { core: numbered, normalized };
    }
    throw new Error(`no unique name left for ${candidate.name}`);
  }

  /** The normalised name when it was still free in `country` (and is now taken). */
  #claim(country: CountryCode, name: string): NameProfile | undefined {
    const normalized = normalizeNameWithoutLegalForm(name);
    const key = nameKey(country, normalized);
    if (this.#takenNames.has(key)) return undefined;
    this.#takenNames.add(key);
    return normalized;
  }
}

/** Country plus the name's canonical tokens in sorted order: "A & B" and "B und A" collide. */
function nameKey(country: CountryCode, name: NameProfile): string {
  return `${country}:${[...name.tokens].sort().join(' ')}`;
}
