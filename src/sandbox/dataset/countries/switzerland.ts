import type { CountryProfile } from './country-profile.ts';
import { europeanHouseNumber } from './country-profile.ts';

export const switzerland: CountryProfile = {
  code: 'CH',
  weight: 5,
  legalForms: [
    { short: 'AG', long: 'Aktiengesellschaft', weight: 45 },
    { short: 'GmbH', long: 'Gesellschaft mit beschränkter Haftung', weight: 40 },
    { short: 'SA', long: 'Société anonyme', weight: 10 },
    { short: 'Sàrl', long: 'Société à responsabilité limitée', weight: 5 },
  ],
  surnames: [
    'Müller', 'Meier', 'Schmid', 'Keller', 'Weber', 'Huber', 'Schneider', 'Meyer', 'Steiner', 'Fischer',
    'Gerber', 'Brunner', 'Baumann', 'Frei', 'Zimmermann', 'Moser', 'Widmer', 'Wyss', 'Graf', 'Roth',
    'Suter', 'Baumgartner', 'Bachmann', 'Studer', 'Bucher', 'Berger', 'Kaufmann', 'Hofmann', 'Bühler', 'Lehmann',
    'Marti', 'Frey', 'Christen', 'Favre', 'Bonvin', 'Rochat', 'Blanc', 'Rey', 'Bernasconi', 'Rossi',
    'Egli', 'Hess', 'Koller', 'Lüthi', 'Zürcher', 'Ammann', 'Sutter', 'Kälin', 'Furrer', 'Hug',
  ],
  industries: [
    { word: 'Logistik', nace: 'H' }, { word: 'Maschinenbau', nace: 'C' }, { word: 'Bau', nace: 'F' },
    { word: 'Informatik', nace: 'J' }, { word: 'Treuhand', nace: 'M' }, { word: 'Handel', nace: 'G' },
    { word: 'Immobilien', nace: 'L' }, { word: 'Elektro', nace: 'F' }, { word: 'Uhren', nace: 'C' },
    { word: 'Präzisionstechnik', nace: 'C' }, { word: 'Pharma', nace: 'C' }, { word: 'Transporte', nace: 'H' },
    { word: 'Gartenbau', nace: 'F' }, { word: 'Holzbau', nace: 'F' }, { word: 'Energie', nace: 'D' },
    { word: 'Medizintechnik', nace: 'C' }, { word: 'Vermögensverwaltung', nace: 'K' }, { word: 'Käserei', nace: 'C' },
    { word: 'Immobilier', nace: 'L' }, { word: 'International', nace: 'G' },
  ],
  brandPrefixes: ['Helvet', 'Alp', 'Jura', 'Rigi', 'Säntis', 'Pilatus', 'Limmat', 'Aare', 'Léman', 'Ticin', 'Engadin', 'Gotthard'],
  brandSuffixes: ['tec', 'med', 'data', 'soft', 'log', 'plan', 'werk', 'net', 'vision', 'ica'],
  conjunctions: ['&', 'und'],
  familyTemplate: 'Gebrüder {surname}',
  towns: [
    { name: 'Zürich', postCodePrefix: '80', region: 'CH-ZH' },
    { name: 'Genève', postCodePrefix: '12', region: 'CH-GE' },
    { name: 'Basel', postCodePrefix: '40', region: 'CH-BS' },
    { name: 'Bern', postCodePrefix: '30', region: 'CH-BE' },
    { name: 'Lausanne', postCodePrefix: '10', region: 'CH-VD' },
    { name: 'Winterthur', postCodePrefix: '84', region: 'CH-ZH' },
    { name: 'Luzern', postCodePrefix: '60', region: 'CH-LU' },
    { name: 'St. Gallen', postCodePrefix: '90', region: 'CH-SG' },
    { name: 'Lugano', postCodePrefix: '69', region: 'CH-TI' },
    { name: 'Biel/Bienne', postCodePrefix: '25', region: 'CH-BE' },
    { name: 'Zug', postCodePrefix: '63', region: 'CH-ZG' },
    { name: 'Schaffhausen', postCodePrefix: '82', region: 'CH-SH' },
  ],
  streetRoots: [
    'Bahnhof', 'Haupt', 'Dorf', 'Kirch', 'Schul', 'Industrie', 'See', 'Berg', 'Wald', 'Garten',
    'Post', 'Zürcher', 'Bündner', 'Rosen', 'Mühle', 'Linden', 'Feld', 'Sonnen',
  ],
  // Swiss German spells Strasse without ß.
  streetTemplates: [
    { template: '{root}strasse', weight: 65 },
    { template: '{root}weg', weight: 15 },
    { template: '{root}gasse', weight: 10 },
    { template: '{root}platz', weight: 10 },
  ],
  numberBeforeStreet: false,
  postCode: (random, town) => town.postCodePrefix + random.digits(2),
  houseNumber: (random) => europeanHouseNumber(random),
};
