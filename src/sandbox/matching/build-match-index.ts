import type { DataSourceAccess } from './features.ts';
import type { CountryTokens, RecordSlot } from './match-index.ts';
import { MatchIndex, MIN_FUZZY_TOKEN_LENGTH } from './match-index.ts';
import type { MatchProfile, NameProfile } from './profile.ts';
import { normalizeSubject } from './profile.ts';
import type { MatchSubject } from './subject.ts';

interface RecordLocation {
  readonly svcId: string;
  readonly dataSourceId: string;
  readonly storageId?: string;
  /** Records with the same key describe the same organization (linked across data sources). */
  readonly entityKey: number;
}

export interface MatchableRecord extends RecordLocation {
  readonly subject: MatchSubject;
}

/** A record already normalised; a producer that knows its records share parts builds these itself. */
export interface ProfiledRecord extends RecordLocation {
  readonly profile: MatchProfile;
}

function listFor(map: Map<string, number[]>, key: string): number[] {
  let list = map.get(key);
  if (list === undefined) map.set(key, (list = []));
  return list;
}

/** Adds `record` to the list of `key`; a token twice in one record's names counts once. */
function push(map: Map<string, number[]>, key: string, record: number): void {
  const list = listFor(map, key);
  if (list[list.length - 1] !== record) list.push(record);
}

function deletionIndex(tokens: Iterable<string>): Map<string, string[]> {
  const deletions = new Map<string, string[]>();
  const add = (key: string, token: string): void => {
    const list = deletions.get(key);
    if (list === undefined) deletions.set(key, [token]);
    else if (!list.includes(token)) list.push(token);
  };
  for (const token of tokens) {
    if (token.length < MIN_FUZZY_TOKEN_LENGTH) continue;
    add(token, token);
    for (let i = 0; i < token.length; i++) add(token.slice(0, i) + token.slice(i + 1), token);
  }
  return deletions;
}

export function* profiled(records: Iterable<MatchableRecord>): Generator<ProfiledRecord> {
  for (const { subject, ...location } of records) yield { ...location, profile: normalizeSubject(subject) };
}

/** Index over records given as subjects (any input shape converted with query-shapes.ts). */
export function buildMatchIndex(
  records: Iterable<MatchableRecord>,
  dataSources: readonly DataSourceAccess[],
): MatchIndex {
  return buildMatchIndexFromProfiles(profiled(records), dataSources);
}

export function buildMatchIndexFromProfiles(
  records: Iterable<ProfiledRecord>,
  dataSources: readonly DataSourceAccess[],
): MatchIndex {
  const accessById = new Map(dataSources.map((source) => [source.id, source]));
  const svcIds: string[] = [];
  const profiles: MatchProfile[] = [];
  const entityKeys: number[] = [];
  const slotOfRecord: number[] = [];
  const slots: RecordSlot[] = [];
  const slotByKey = new Map<string, Map<string | undefined, number>>();
  const tokenLists = new Map<string, Map<string, number[]>>();
  const recordsPerCountry = new Map<string, number>();
  const postCodeLists = new Map<string, Map<string, number[]>>();
  const identifierLists = new Map<string, number[]>();
  let previousNames: readonly NameProfile[] | undefined;
  let previousCountry = '';
  let previousLists: number[][] = [];

  for (const record of records) {
    const index = svcIds.length;
    const profile = record.profile;
    let slotsOfSource = slotByKey.get(record.dataSourceId);
    if (slotsOfSource === undefined) slotByKey.set(record.dataSourceId, (slotsOfSource = new Map()));
    let slot = slotsOfSource.get(record.storageId);
    if (slot === undefined) {
      const access = accessById.get(record.dataSourceId);
      if (access === undefined)
        throw new RangeError(`record ${record.svcId} names unknown data source ${record.dataSourceId}`);
      slot = slots.length;
      slots.push({ dataSourceId: access.id, storageId: record.storageId, activatedBy: access.activatedBy });
      slotsOfSource.set(record.storageId, slot);
    }
    svcIds.push(record.svcId);
    profiles.push(profile);
    entityKeys.push(record.entityKey);
    slotOfRecord.push(slot);

    const country = profile.country ?? '';
    recordsPerCountry.set(country, (recordsPerCountry.get(country) ?? 0) + 1);
    // Records of one organization usually share their names array: reuse the posting lists
    // found for the previous record instead of looking every token up again.
    if (profile.names !== previousNames || country !== previousCountry) {
      let countryLists = tokenLists.get(country);
      if (countryLists === undefined) tokenLists.set(country, (countryLists = new Map()));
      previousLists = [];
      for (const name of profile.names)
        for (const token of name.tokens) previousLists.push(listFor(countryLists, token));
      previousNames = profile.names;
      previousCountry = country;
    }
    for (const list of previousLists) if (list[list.length - 1] !== index) list.push(index);
    if (profile.address.postCode !== undefined) {
      let countryPostCodes = postCodeLists.get(country);
      if (countryPostCodes === undefined) postCodeLists.set(country, (countryPostCodes = new Map()));
      push(countryPostCodes, profile.address.postCode, index);
    }
    for (const identifier of profile.identifiers) push(identifierLists, identifier, index);
  }

  const tokensByCountry = new Map<string, CountryTokens>();
  for (const [country, lists] of tokenLists) {
    tokensByCountry.set(country, {
      postings: lists,
      deletions: deletionIndex(lists.keys()),
      recordCount: recordsPerCountry.get(country) ?? 0,
    });
  }
  return new MatchIndex({
    svcIds,
    profiles,
    entityKeys: Int32Array.from(entityKeys),
    slotOfRecord: Uint16Array.from(slotOfRecord),
    slots,
    tokensByCountry,
    postCodes: postCodeLists,
    identifiers: identifierLists,
  });
}
