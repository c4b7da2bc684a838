import type { CountryProfile } from './country-profile.ts';
import { europeanHouseNumber } from './country-profile.ts';

// Dutch post code letters never use F, I, O, Q, U or Y.
const POST_CODE_LETTERS = 'ABCDEGHJKLMNPRSTVWXZ';

export const netherlands: CountryProfile = {
  code: 'NL',
  weight: 8,
  legalForms: [
    { short: 'B.V.', long: 'Besloten Vennootschap', weight: 80 },
    { short: 'N.V.', long: 'Naamloze Vennootschap', weight: 8 },
    { short: 'V.O.F.', long: 'Vennootschap onder firma', weight: 12 },
  ],
  surnames: [
    'de Jong', 'Jansen', 'de Vries', 'van den Berg', 'van Dijk', 'Bakker', 'Janssen', 'Visser', 'Smit', 'Meijer',
    'de Boer', 'Mulder', 'de Groot', 'Bos', 'Vos', 'Peters', 'Hendriks', 'van Leeuwen', 'Dekker', 'Brouwer',
    'de Wit', 'Dijkstra', 'Smits', 'de Graaf', 'van der Meer', 'van der Linden', 'Kok', 'Jacobs', 'de Haan', 'Vermeulen',
    'van den Heuvel', 'van der Veen', 'van den Broek', 'de Bruijn', 'de Bruin', 'van der Heijden', 'Schouten', 'van Beek',
    'Willems', 'van Vliet', 'van de Ven', 'Hoekstra', 'Maas', 'Verhoeven', 'Koster', 'van Dam', 'van der Wal', 'Prins',
    'Blom', 'Huisman', 'Peeters', 'de Jonge', 'Kuipers', 'van Veen', 'Post', 'Kuiper', 'Veenstra', 'Kramer',
  ],
  industries: [
    { word: 'Logistiek', nace: 'H' }, { word: 'Transport', nace: 'H' }, { word: 'Bouw', nace: 'F' },
    { word: 'Installatietechniek', nace: 'F' }, { word: 'Software', nace: 'J' }, { word: 'Handel', nace: 'G' },
    { word: 'Vastgoed', nace: 'L' }, { word: 'Advies', nace: 'M' }, { word: 'Techniek', nace: 'C' },
    { word: 'Metaalbewerking', nace: 'C' }, { word: 'Voeding', nace: 'C' }, { word: 'Automotive', nace: 'G' },
    { word: 'Drukkerij', nace: 'C' }, { word: 'Verpakkingen', nace: 'C' }, { word: 'Energie', nace: 'D' },
    { word: 'Schoonmaak', nace: 'N' }, { word: 'Uitzendbureau', nace: 'N' }, { word: 'Holding', nace: 'K' },
    { word: 'Kwekerij', nace: 'A' }, { word: 'Scheepvaart', nace: 'H' }, { word: 'Zuivel', nace: 'C' },
    { word: 'International', nace: 'G' },
  ],
  brandPrefixes: [
    'Holland', 'Delta', 'Polder', 'Maas', 'Noordzee', 'Oranje', 'Zuid', 'Veluwe', 'Wadden', 'Rijn',
    'Amstel', 'Brabant', 'Tulp', 'Zeeland',
  ],
  brandSuffixes: ['tech', 'com', 'plan', 'net', 'line', 'data', 'soft', 'med', 'pro', 'form'],
  conjunctions: ['&', 'en'],
  familyTemplate: '{surname} & Zonen',
  towns: [
    { name: 'Amsterdam', postCodePrefix: '10', region: 'NL-NH' },
    { name: 'Rotterdam', postCodePrefix: '30', region: 'NL-ZH' },
    { name: 'Den Haag', postCodePrefix: '25', region: 'NL-ZH' },
    { name: 'Utrecht', postCodePrefix: '35', region: 'NL-UT' },
    { name: 'Eindhoven', postCodePrefix: '56', region: 'NL-NB' },
    { name: 'Groningen', postCodePrefix: '97', region: 'NL-GR' },
    { name: 'Tilburg', postCodePrefix: '50', region: 'NL-NB' },
    { name: 'Almere', postCodePrefix: '13', region: 'NL-FL' },
    { name: 'Breda', postCodePrefix: '48', region: 'NL-NB' },
    { name: 'Nijmegen', postCodePrefix: '65', region: 'NL-GE' },
    { name: 'Arnhem', postCodePrefix: '68', region: 'NL-GE' },
    { name: 'Haarlem', postCodePrefix: '20', region: 'NL-NH' },
    { name: 'Enschede', postCodePrefix: '75', region: 'NL-OV' },
    { name: 'Maastricht', postCodePrefix: '62', region: 'NL-LI' },
    { name: 'Zwolle', postCodePrefix: '80', region: 'NL-OV' },
    { name: 'Leiden', postCodePrefix: '23', region: 'NL-ZH' },
  ],
  streetRoots: [
    'Kerk', 'Dorps', 'Molen', 'Stations', 'Heren', 'Keizers', 'Prinsen', 'Bloem', 'Linden', 'Wilhelmina',
    'Julianna', 'Beatrix', 'Markt', 'School', 'Haven', 'Nieuwe', 'Oude', 'Spoor', 'Berken', 'Eiken',
  ],
  streetTemplates: [
    { template: '{root}straat', weight: 50 },
    { template: '{root}weg', weight: 20 },
    { template: '{root}laan', weight: 15 },
    { template: '{root}gracht', weight: 5 },
    { template: '{root}plein', weight: 5 },
    { template: '{root}kade', weight: 5 },
  ],
  numberBeforeStreet: false,
  postCode: (random, town) =>
    `${town.postCodePrefix}${random.digits(2)} ${random.fromAlphabet(POST_CODE_LETTERS, 2)}`,
  houseNumber: (random) => europeanHouseNumber(random, 'ABC'),
};
