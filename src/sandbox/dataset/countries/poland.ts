import type { CountryProfile } from './country-profile.ts';

export const poland: CountryProfile = {
  code: 'PL',
  weight: 7,
  legalForms: [
    { short: 'Sp. z o.o.', long: 'Spółka z ograniczoną odpowiedzialnością', weight: 75 },
    { short: 'S.A.', long: 'Spółka Akcyjna', weight: 12 },
    { short: 'Sp.k.', long: 'Spółka komandytowa', weight: 8 },
    { short: 'Sp.j.', long: 'Spółka jawna', weight: 5 },
  ],
  surnames: [
    'Nowak', 'Kowalski', 'Wiśniewski', 'Wójcik', 'Kowalczyk', 'Kamiński', 'Lewandowski', 'Zieliński', 'Szymański', 'Woźniak',
    'Dąbrowski', 'Kozłowski', 'Jankowski', 'Mazur', 'Wojciechowski', 'Kwiatkowski', 'Krawczyk', 'Kaczmarek', 'Piotrowski', 'Grabowski',
    'Zając', 'Pawłowski', 'Michalski', 'Król', 'Nowakowski', 'Wieczorek', 'Jabłoński', 'Wróbel', 'Majewski', 'Olszewski',
    'Stępień', 'Malinowski', 'Jaworski', 'Adamczyk', 'Dudek', 'Nowicki', 'Pawlak', 'Górski', 'Witkowski', 'Walczak',
    'Sikora', 'Baran', 'Rutkowski', 'Michalak', 'Szewczyk', 'Ostrowski', 'Tomaszewski', 'Pietrzak', 'Marciniak', 'Wróblewski',
  ],
  industries: [
    { word: 'Logistyka', nace: 'H' }, { word: 'Transport', nace: 'H' }, { word: 'Budownictwo', nace: 'F' },
    { word: 'Informatyka', nace: 'J' }, { word: 'Doradztwo', nace: 'M' }, { word: 'Dystrybucja', nace: 'G' },
    { word: 'Nieruchomości', nace: 'L' }, { word: 'Instalacje', nace: 'F' }, { word: 'Inżynieria', nace: 'M' },
    { word: 'Spożywcza', nace: 'C' }, { word: 'Mechanika', nace: 'C' }, { word: 'Drukarnia', nace: 'C' },
    { word: 'Opakowania', nace: 'C' }, { word: 'Energetyka', nace: 'D' }, { word: 'Usługi', nace: 'N' },
    { word: 'Meble', nace: 'C' }, { word: 'Handel', nace: 'G' }, { word: 'Stal', nace: 'C' },
    { word: 'Systemy', nace: 'J' }, { word: 'Farmacja', nace: 'C' },
  ],
  brandPrefixes: ['Polo', 'Wisła', 'Bałt', 'Mazow', 'Tatra', 'Karpat', 'Odra', 'Warta', 'Silesia', 'Pomor', 'Podhal', 'Sudety'],
  brandSuffixes: ['tech', 'pol', 'plast', 'bud', 'med', 'net', 'soft', 'trans', 'max', 'ex'],
  conjunctions: ['&', 'i'],
  familyTemplate: '{surname} i Synowie',
  towns: [
    { name: 'Warszawa', postCodePrefix: '00', region: 'PL-14' },
    { name: 'Kraków', postCodePrefix: '30', region: 'PL-12' },
    { name: 'Łódź', postCodePrefix: '90', region: 'PL-10' },
    { name: 'Wrocław', postCodePrefix: '50', region: 'PL-02' },
    { name: 'Poznań', postCodePrefix: '60', region: 'PL-30' },
    { name: 'Gdańsk', postCodePrefix: '80', region: 'PL-22' },
    { name: 'Szczecin', postCodePrefix: '70', region: 'PL-32' },
    { name: 'Bydgoszcz', postCodePrefix: '85', region: 'PL-04' },
    { name: 'Lublin', postCodePrefix: '20', region: 'PL-06' },
    { name: 'Katowice', postCodePrefix: '40', region: 'PL-24' },
    { name: 'Białystok', postCodePrefix: '15', region: 'PL-20' },
    { name: 'Rzeszów', postCodePrefix: '35', region: 'PL-18' },
  ],
  streetRoots: [
    'Marszałkowska', 'Długa', 'Kościuszki', 'Mickiewicza', 'Słowackiego', 'Piłsudskiego', 'Wojska Polskiego',
    'Polna', 'Leśna', 'Kwiatowa', 'Jana Pawła II', 'Sienkiewicza', 'Ogrodowa', 'Szkolna', 'Kolejowa', 'Lipowa',
  ],
  streetTemplates: [
    { template: 'ul. {root}', weight: 80 },
    { template: 'al. {root}', weight: 12 },
    { template: 'pl. {root}', weight: 8 },
  ],
  numberBeforeStreet: false,
  postCode: (random, town) => `${town.postCodePrefix}-${random.digits(3)}`,
  houseNumber: (random) => {
    const number = String(random.between(1, 140));
    return random.chance(0.15) ? `${number}/${random.between(1, 40)}` : number;
  },
};
