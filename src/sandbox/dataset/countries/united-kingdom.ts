import type { CountryProfile } from './country-profile.ts';

// Inward codes never use C, I, K, M, O or V.
const INWARD_LETTERS = 'ABDEFGHJLNPQRSTUWXYZ';

export const unitedKingdom: CountryProfile = {
  code: 'GB',
  weight: 12,
  legalForms: [
    { short: 'Ltd', long: 'Limited', weight: 80 },
    { short: 'PLC', long: 'Public Limited Company', weight: 8 },
    { short: 'LLP', long: 'Limited Liability Partnership', weight: 12 },
  ],
  surnames: [
    'Smith', 'Jones', 'Taylor', 'Brown', 'Williams', 'Wilson', 'Johnson', 'Davies', 'Robinson', 'Wright',
    'Thompson', 'Evans', 'Walker', 'White', 'Roberts', 'Green', 'Hall', 'Wood', 'Jackson', 'Clarke',
    'Patel', 'Khan', 'Lewis', 'James', 'Phillips', 'Mason', 'Mitchell', 'Rose', 'Davis', 'Rodriguez',
    'Cox', 'Alexander', 'Morgan', 'Moore', 'Martin', 'Price', 'Clark', 'Hughes', 'Harris', 'Turner',
    'Cooper', 'Hill', 'Ward', 'Morris', 'King', 'Baker', 'Harrison', 'Edwards', 'Watson', 'Bennett',
    'Fletcher', 'Campbell', 'Stewart', 'Murray', 'Kennedy', 'Grant', 'Ellis', 'Shaw', 'Fox', 'Marshall',
  ],
  industries: [
    { word: 'Logistics', nace: 'H' }, { word: 'Engineering', nace: 'M' }, { word: 'Construction', nace: 'F' },
    { word: 'Consulting', nace: 'M' }, { word: 'Software', nace: 'J' }, { word: 'Trading', nace: 'G' },
    { word: 'Properties', nace: 'L' }, { word: 'Electrical Services', nace: 'F' }, { word: 'Haulage', nace: 'H' },
    { word: 'Manufacturing', nace: 'C' }, { word: 'Foods', nace: 'C' }, { word: 'Motors', nace: 'G' },
    { word: 'Print', nace: 'C' }, { word: 'Packaging', nace: 'C' }, { word: 'Energy', nace: 'D' },
    { word: 'Cleaning Services', nace: 'N' }, { word: 'Recruitment', nace: 'N' }, { word: 'Developments', nace: 'F' },
    { word: 'Holdings', nace: 'K' }, { word: 'Technologies', nace: 'J' },
    { word: 'Plumbing', nace: 'F' }, { word: 'Estates', nace: 'L' }, { word: 'Pharmaceuticals', nace: 'C' },
    { word: 'International', nace: 'G' }, { word: 'Group', nace: 'K' },
  ],
  brandPrefixes: [
    'Thames', 'Pennine', 'Albion', 'Severn', 'Mersey', 'Cotswold', 'Clyde', 'Tyne', 'Chiltern', 'Kestrel',
    'Avon', 'Trent', 'Highland', 'Solent', 'Mendip', 'Humber',
  ],
  brandSuffixes: ['tech', 'wise', 'line', 'gate', 'field', 'point', 'core', 'works', 'cast', 'way'],
  conjunctions: ['&', 'and'],
  familyTemplate: '{surname} Brothers',
  towns: [
    { name: 'London', postCodePrefix: 'SE', region: 'GB-LND' },
    { name: 'London', postCodePrefix: 'EC', region: 'GB-LND' },
    { name: 'Manchester', postCodePrefix: 'M', region: 'GB-MAN' },
    { name: 'Birmingham', postCodePrefix: 'B', region: 'GB-BIR' },
    { name: 'Leeds', postCodePrefix: 'LS', region: 'GB-LDS' },
    { name: 'Glasgow', postCodePrefix: 'G', region: 'GB-GLG' },
    { name: 'Edinburgh', postCodePrefix: 'EH', region: 'GB-EDH' },
    { name: 'Liverpool', postCodePrefix: 'L', region: 'GB-LIV' },
    { name: 'Bristol', postCodePrefix: 'BS', region: 'GB-BST' },
    { name: 'Sheffield', postCodePrefix: 'S', region: 'GB-SHF' },
    { name: 'Cardiff', postCodePrefix: 'CF', region: 'GB-CRF' },
    { name: 'Newcastle upon Tyne', postCodePrefix: 'NE', region: 'GB-NET' },
    { name: 'Nottingham', postCodePrefix: 'NG', region: 'GB-NGM' },
    { name: 'Belfast', postCodePrefix: 'BT', region: 'GB-BFS' },
    { name: 'Reading', postCodePrefix: 'RG', region: 'GB-RDG' },
  ],
  streetRoots: [
    'High', 'Station', 'Church', 'Victoria', 'Park', 'Mill', 'King', 'Queen', 'London', 'Manor',
    'Albert', 'Grange', 'Castle', 'Bridge', 'Market', 'New', 'York', 'Chapel', 'Windsor', 'Green',
  ],
  streetTemplates: [
    { template: '{root} Street', weight: 35 },
    { template: '{root} Road', weight: 35 },
    { template: '{root} Lane', weight: 10 },
    { template: '{root} Avenue', weight: 8 },
    { template: '{root} Close', weight: 5 },
    { template: '{root} Way', weight: 7 },
  ],
  numberBeforeStreet: true,
  postCode: (random, town) =>
    `${town.postCodePrefix}${random.between(1, 20)} ${random.digits(1)}${random.fromAlphabet(INWARD_LETTERS, 2)}`,
  houseNumber: (random) => String(random.between(1, random.chance(0.8) ? 80 : 300)),
};
