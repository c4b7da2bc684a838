import type { CountryCode } from './countries/index.ts';
import type { DataSource, OmittableField } from './data-sources.ts';
import { DATA_SOURCES, FIELD } from './data-sources.ts';
import type { IdentifierKind, OrganizationIdentifier } from './identifiers.ts';
import type { Random } from './random.ts';

/** How many sources list an organization: most are in two, some in one, few in four. */
const SOURCE_COUNTS = [
  { count: 1, weight: 25 },
  { count: 2, weight: 35 },
  { count: 3, weight: 25 },
  { count: 4, weight: 15 },
];
/** Share of organizations whose first source is the open register rather than a VAT or LEI list. */
const OPEN_REGISTER_FIRST = 0.85;

interface Listable {
  readonly country: CountryCode;
  readonly identifiers: readonly OrganizationIdentifier[];
}

function eligible(source: DataSource, org: Listable): boolean {
  if (source.countries !== undefined && !source.countries.includes(org.country)) return false;
  return (
    source.requires === undefined || org.identifiers.some((identifier) => identifier.kind === source.requires)
  );
}

function byId(id: string): DataSource {
  const source = DATA_SOURCES.find((candidate) => candidate.id === id);
  if (source === undefined) throw new RangeError(`unknown data source ${id}`);
  return source;
}

const OPEN_REGISTER = byId('OPENREG');
const VAT_REGISTER = byId('VATREG');
const LEI_INDEX = byId('LEIREG');

/**
 * The sources listing an organization, first one searched by default: every organization can
 * be found without any ACTIVATE_DATASOURCE_* feature, as in the real registers.
 */
export function chooseSources(org: Listable, random: Random): DataSource[] {
  const has = (kind: IdentifierKind): boolean =>
    org.identifiers.some((identifier) => identifier.kind === kind);
  const first =
    random.chance(OPEN_REGISTER_FIRST) || (!has('VAT') && !has('LEI'))
      ? OPEN_REGISTER
      : has('VAT')
        ? VAT_REGISTER
        : LEI_INDEX;
  const chosen = [first];
  const target = random.weighted(SOURCE_COUNTS).count;
  const pool = DATA_SOURCES.filter((source) => source !== first && eligible(source, org));
  let poolWeight = pool.reduce((total, source) => total + source.coverage, 0);
  while (chosen.length < target && pool.length > 0) {
    let roll = random.next() * poolWeight;
    let picked = pool.length - 1;
    for (let i = 0; i < pool.length; i++) {
      roll -= pool[i]?.coverage ?? 0;
      if (roll < 0) {
        picked = i;
        break;
      }
    }
    const [source] = pool.splice(picked, 1);
    if (source === undefined) break;
    chosen.push(source);
    poolWeight -= source.coverage;
  }
  return chosen;
}

interface RecordGaps {
  readonly always: number;
  readonly chances: readonly (readonly [bit: number, chance: number])[];
}

const GAPS = new Map<DataSource, RecordGaps>(
  DATA_SOURCES.map((source) => [
    source,
    {
      always: source.neverHas.reduce((mask, field) => mask | FIELD[field], 0),
      chances: Object.entries(source.gaps).map(
        ([field, chance]) => [FIELD[field as OmittableField], chance ?? 0] as const,
      ),
    },
  ]),
);

/** Omission mask of one record: what the source never has plus its random gaps. */
export function omittedFields(source: DataSource, random: Random): number {
  const gaps = GAPS.get(source);
  if (gaps === undefined) throw new RangeError(`unknown data source ${source.id}`);
  let mask = gaps.always;
  for (const [bit, chance] of gaps.chances) if (random.chance(chance)) mask |= bit;
  return mask;
}
