// Canonical spellings of words that names and streets abbreviate. Both sides of a comparison
// map every spelling to the same short form ("Straße", "Strasse", "Str." -> "str"), which is
// language neutral where the concept is shared ("Platz", "place", "plaza", "piazza" -> "pl").

function canonicalMap(groups: Readonly<Record<string, readonly string[]>>): ReadonlyMap<string, string> {
  const map = new Map<string, string>();
  for (const [canonical, spellings] of Object.entries(groups)) {
    map.set(canonical, canonical);
    for (const spelling of spellings) map.set(spelling, canonical);
  }
  return map;
}

// Names keep the written-out word as canonical form, so that a misspelt "Servces" is still
// one edit away from the canonical "services" in the index.
const NAME_WORDS = canonicalMap({
  international: ['intl', 'int', 'internationale', 'internacional', 'internazionale'],
  manufacturing: ['mfg', 'manufacturers'],
  brothers: ['bros', 'bro', 'gebruder', 'gebr', 'freres', 'hermanos', 'hnos', 'fratelli', 'flli'],
  sons: ['zonen', 'synowie', 'sohne', 'figli', 'hijos'],
  company: ['co', 'compagnie', 'cie', 'compania', 'cia'],
  group: ['grp', 'gruppe', 'groupe', 'grupo', 'gruppo'],
  holdings: ['holding', 'hldg', 'hldgs'],
  technologies: ['technology', 'tech', 'techn'],
  services: ['service', 'svc', 'svcs', 'serv'],
  systems: ['system', 'sys'],
  industries: ['industry', 'industrie', 'ind', 'inds'],
  solutions: ['solns', 'soln'],
  engineering: ['eng', 'engg'],
  associates: ['assoc', 'association'],
  management: ['mgmt'],
  developments: ['development', 'dev'],
  properties: ['props'],
});

// Conjunctions and articles carry no identity: "Müller & Schmidt" = "Müller und Schmidt".
const NAME_STOPWORDS: ReadonlySet<string> = new Set([
  'and',
  'und',
  'et',
  'y',
  'e',
  'en',
  'i',
  'the',
  'of',
  'der',
  'die',
  'das',
  'le',
  'la',
  'les',
  'el',
  'il',
  'de',
  'du',
  'des',
  'del',
  'della',
  'di',
  'da',
  'van',
  'von',
  'den',
  'ter',
  'l',
  'd',
]);

const STREET_WORDS = canonicalMap({
  str: ['strasse', 'straat'],
  pl: ['platz', 'place', 'plaza', 'piazza', 'plac', 'plein', 'pza', 'pzza', 'placa'],
  al: ['allee', 'aleja'],
  st: ['street'],
  rd: ['road'],
  av: ['avenue', 'ave', 'avda', 'avenida', 'aven', 'avinguda'],
  bd: ['boulevard', 'blvd', 'boul', 'bvd', 'bld'],
  ln: ['lane', 'laan'],
  dr: ['drive'],
  ct: ['court'],
  sq: ['square'],
  c: ['calle', 'cl', 'cll', 'carrer'],
  ch: ['chemin', 'chem'],
  imp: ['impasse'],
  rte: ['route'],
  fbg: ['faubourg'],
  po: ['paseo', 'pso'],
  cno: ['camino'],
  v: ['via'],
  cso: ['corso'],
  vle: ['viale'],
  gr: ['gracht'],
  kd: ['kade'],
  os: ['osiedle'],
});

// Street-type words that German and Dutch write as the end of a compound ("Hauptstraße",
// "Kerkstraat"); the compound keeps its stem and gets the canonical ending.
const STREET_SUFFIXES: readonly (readonly [string, string])[] = [
  ['strasse', 'str'],
  ['straat', 'str'],
  ['platz', 'pl'],
  ['plein', 'pl'],
  ['allee', 'al'],
];

const STREET_STOPWORDS: ReadonlySet<string> = new Set([
  'de',
  'la',
  'du',
  'des',
  'del',
  'della',
  'di',
  'the',
  'of',
  'l',
  'd',
  'am',
  'im',
  'an',
  'der',
  'die',
  'das',
  // Polish addresses often leave out "ul." (ulica, street).
  'ul',
  'ulica',
]);

// German umlauts are also written as two letters ("Gebrueder", "Moeller"); folding removed
// the dots, so "ue" stands where "u" stands in the register's spelling.
const UMLAUT_DIGRAPHS = /([aou])e/g;

/** `token` with ae, oe, ue read as a, o, u; the token itself when it has none. */
const withoutUmlautDigraphs = (token: string): string => token.replace(UMLAUT_DIGRAPHS, '$1');

export function canonicalNameWord(token: string): string | undefined {
  if (NAME_STOPWORDS.has(token)) return undefined;
  return NAME_WORDS.get(token) ?? NAME_WORDS.get(withoutUmlautDigraphs(token)) ?? token;
}

export function canonicalStreetWord(token: string): string | undefined {
  if (STREET_STOPWORDS.has(token)) return undefined;
  const canonical = STREET_WORDS.get(token);
  if (canonical !== undefined) return canonical;
  for (const [suffix, replacement] of STREET_SUFFIXES) {
    if (token.length > suffix.length && token.endsWith(suffix)) {
      return token.slice(0, token.length - suffix.length) + replacement;
    }
  }
  return token;
}
