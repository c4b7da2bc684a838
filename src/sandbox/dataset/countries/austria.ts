import type { CountryProfile } from './country-profile.ts';
import { europeanHouseNumber } from './country-profile.ts';

export const austria: CountryProfile = {
  code: 'AT',
  weight: 5,
  legalForms: [
    { short: 'GmbH', long: 'Gesellschaft mit beschränkter Haftung', weight: 70 },
    { short: 'AG', long: 'Aktiengesellschaft', weight: 8 },
    { short: 'GmbH & Co KG', long: 'GmbH & Co Kommanditgesellschaft', weight: 12 },
    { short: 'KG', long: 'Kommanditgesellschaft', weight: 6 },
    { short: 'OG', long: 'Offene Gesellschaft', weight: 4 },
  ],
  surnames: [
    'Gruber', 'Huber', 'Bauer', 'Wagner', 'Müller', 'Pichler', 'Steiner', 'Moser', 'Mayer', 'Hofer',
    'Leitner', 'Berger', 'Fuchs', 'Eder', 'Fischer', 'Schmid', 'Winkler', 'Weber', 'Schwarz', 'Maier',
    'Schneider', 'Reiter', 'Mayr', 'Schmidt', 'Wimmer', 'Egger', 'Brunner', 'Lang', 'Baumgartner', 'Auer',
    'Binder', 'Lechner', 'Wolf', 'Wallner', 'Aigner', 'Ebner', 'Koller', 'Lehner', 'Haas', 'Schuster',
    'Holzer', 'Strasser', 'Riegler', 'Zauner', 'Hackl', 'Kogler', 'Brandstätter', 'Haider', 'Stadler', 'Karner',
  ],
  industries: [
    { word: 'Logistik', nace: 'H' }, { word: 'Maschinenbau', nace: 'C' }, { word: 'Bau', nace: 'F' },
    { word: 'Elektrotechnik', nace: 'C' }, { word: 'Software', nace: 'J' }, { word: 'Handel', nace: 'G' },
    { word: 'Immobilien', nace: 'L' }, { word: 'Transporte', nace: 'H' }, { word: 'Holzindustrie', nace: 'C' },
    { word: 'Tourismus', nace: 'I' }, { word: 'Installationen', nace: 'F' }, { word: 'Metallbau', nace: 'C' },
    { word: 'Beratung', nace: 'M' }, { word: 'Energie', nace: 'D' }, { word: 'Getränke', nace: 'C' },
    { word: 'Seilbahnen', nace: 'H' }, { word: 'Stahlbau', nace: 'C' }, { word: 'International', nace: 'G' },
  ],
  brandPrefixes: ['Donau', 'Alpen', 'Tirol', 'Wachau', 'Salzach', 'Kärnten', 'Inn', 'Steir', 'Vorarl', 'Mur', 'Enns', 'Traun'],
  brandSuffixes: ['tec', 'werk', 'plan', 'form', 'data', 'soft', 'med', 'line', 'net', 'tronic'],
  conjunctions: ['&', 'und'],
  familyTemplate: 'Gebrüder {surname}',
  towns: [
    { name: 'Wien', postCodePrefix: '1', region: 'AT-9' },
    { name: 'Graz', postCodePrefix: '80', region: 'AT-6' },
    { name: 'Linz', postCodePrefix: '40', region: 'AT-4' },
    { name: 'Salzburg', postCodePrefix: '50', region: 'AT-5' },
    { name: 'Innsbruck', postCodePrefix: '60', region: 'AT-7' },
    { name: 'Klagenfurt am Wörthersee', postCodePrefix: '90', region: 'AT-2' },
    { name: 'Villach', postCodePrefix: '95', region: 'AT-2' },
    { name: 'Wels', postCodePrefix: '46', region: 'AT-4' },
    { name: 'St. Pölten', postCodePrefix: '31', region: 'AT-3' },
    { name: 'Dornbirn', postCodePrefix: '68', region: 'AT-8' },
    { name: 'Bregenz', postCodePrefix: '69', region: 'AT-8' },
    { name: 'Eisenstadt', postCodePrefix: '70', region: 'AT-1' },
  ],
  streetRoots: [
    'Haupt', 'Bahnhof', 'Kirchen', 'Schul', 'Mühl', 'Linzer', 'Grazer', 'Wiener', 'Markt', 'Berg',
    'Sonnen', 'Wald', 'Garten', 'Rathaus', 'Kaiser', 'Mozart', 'Schiller', 'Industrie',
  ],
  streetTemplates: [
    { template: '{root}straße', weight: 55 },
    { template: '{root}gasse', weight: 20 },
    { template: '{root}weg', weight: 15 },
    { template: '{root}platz', weight: 10 },
  ],
  numberBeforeStreet: false,
  // Vienna's post codes carry the district: 1010 .. 1230.
  postCode: (random, town) =>
    town.postCodePrefix.length === 1
      ? `${town.postCodePrefix}${String(random.between(1, 23)).padStart(2, '0')}0`
      : town.postCodePrefix + random.digits(2),
  houseNumber: (random) => europeanHouseNumber(random),
};
