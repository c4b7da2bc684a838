import type { CountryProfile } from './country-profile.ts';

export const france: CountryProfile = {
  code: 'FR',
  weight: 12,
  legalForms: [
    { short: 'SAS', long: 'Société par actions simplifiée', weight: 40 },
    { short: 'SARL', long: 'Société à responsabilité limitée', weight: 35 },
    { short: 'SA', long: 'Société anonyme', weight: 10 },
    { short: 'EURL', long: 'Entreprise unipersonnelle à responsabilité limitée', weight: 8 },
    { short: 'SNC', long: 'Société en nom collectif', weight: 4 },
    { short: 'SASU', long: 'Société par actions simplifiée unipersonnelle', weight: 3 },
  ],
  surnames: [
    'Martin', 'Bernard', 'Dubois', 'Thomas', 'Robert', 'Richard', 'Petit', 'Durand', 'Leroy', 'Moreau',
    'Simon', 'Laurent', 'Lefebvre', 'Michel', 'Garcia', 'David', 'Bertrand', 'Roux', 'Vincent', 'Fournier',
    'Morel', 'Girard', 'André', 'Lefèvre', 'Mercier', 'Dupont', 'Lambert', 'Bonnet', 'François', 'Martinez',
    'Legrand', 'Garnier', 'Faure', 'Rousseau', 'Blanc', 'Guérin', 'Muller', 'Henry', 'Roussel', 'Nicolas',
    'Perrin', 'Morin', 'Mathieu', 'Clément', 'Gauthier', 'Dumont', 'Lopez', 'Fontaine', 'Chevalier', 'Robin',
    'Masson', 'Sanchez', 'Gérard', 'Nguyen', 'Boyer', 'Denis', 'Lemaire', 'Duval', 'Joly', 'Gautier',
  ],
  industries: [
    { word: 'Logistique', nace: 'H' }, { word: 'Transports', nace: 'H' }, { word: 'Bâtiment', nace: 'F' },
    { word: 'Informatique', nace: 'J' }, { word: 'Conseil', nace: 'M' }, { word: 'Distribution', nace: 'G' },
    { word: 'Immobilier', nace: 'L' }, { word: 'Électricité', nace: 'F' }, { word: 'Menuiserie', nace: 'F' },
    { word: 'Plomberie', nace: 'F' }, { word: 'Boulangerie', nace: 'C' }, { word: 'Mécanique', nace: 'C' },
    { word: 'Industrie', nace: 'C' }, { word: 'Services', nace: 'N' }, { word: 'Énergie', nace: 'D' },
    { word: 'Emballages', nace: 'C' }, { word: 'Automobiles', nace: 'G' }, { word: 'Imprimerie', nace: 'C' },
    { word: 'Ingénierie', nace: 'M' }, { word: 'Nettoyage', nace: 'N' }, { word: 'Agroalimentaire', nace: 'C' },
    { word: 'Métallerie', nace: 'C' }, { word: 'Pharmacie', nace: 'G' }, { word: 'Travaux Publics', nace: 'F' },
    { word: 'International', nace: 'G' },
  ],
  brandPrefixes: [
    'Atlan', 'Provence', 'Loire', 'Alpes', 'Seine', 'Breizh', 'Garonne', 'Rhône', 'Azur', 'Lumi',
    'Vendée', 'Jura', 'Arvor', 'Normandie', 'Gironde', 'Savoie',
  ],
  brandSuffixes: ['tech', 'plast', 'com', 'soft', 'pro', 'med', 'ia', 'nova', 'lis', 'ys'],
  conjunctions: ['&', 'et'],
  familyTemplate: '{surname} Frères',
  towns: [
    { name: 'Paris', postCodePrefix: '750', region: 'FR-IDF' },
    { name: 'Lyon', postCodePrefix: '690', region: 'FR-ARA' },
    { name: 'Marseille', postCodePrefix: '130', region: 'FR-PAC' },
    { name: 'Toulouse', postCodePrefix: '310', region: 'FR-OCC' },
    { name: 'Nice', postCodePrefix: '060', region: 'FR-PAC' },
    { name: 'Nantes', postCodePrefix: '440', region: 'FR-PDL' },
    { name: 'Strasbourg', postCodePrefix: '670', region: 'FR-GES' },
    { name: 'Montpellier', postCodePrefix: '340', region: 'FR-OCC' },
    { name: 'Bordeaux', postCodePrefix: '330', region: 'FR-NAQ' },
    { name: 'Lille', postCodePrefix: '590', region: 'FR-HDF' },
    { name: 'Rennes', postCodePrefix: '350', region: 'FR-BRE' },
    { name: 'Reims', postCodePrefix: '511', region: 'FR-GES' },
    { name: 'Grenoble', postCodePrefix: '380', region: 'FR-ARA' },
    { name: 'Dijon', postCodePrefix: '210', region: 'FR-BFC' },
    { name: 'Rouen', postCodePrefix: '760', region: 'FR-NOR' },
  ],
  streetRoots: [
    'de la Paix', 'du Moulin', 'Victor Hugo', 'des Lilas', 'de la République', 'Jean Jaurès', 'de Verdun',
    'du Général de Gaulle', 'Pasteur', 'de la Gare', "de l'Église", 'des Écoles', 'Gambetta', 'Foch',
    'Émile Zola', 'du Commerce', 'de la Liberté', 'des Tilleuls', 'Voltaire', 'Carnot',
  ],
  streetTemplates: [
    { template: 'Rue {root}', weight: 60 },
    { template: 'Avenue {root}', weight: 15 },
    { template: 'Boulevard {root}', weight: 10 },
    { template: 'Place {root}', weight: 5 },
    { template: 'Chemin {root}', weight: 5 },
    { template: 'Impasse {root}', weight: 5 },
  ],
  numberBeforeStreet: true,
  // Paris post codes end in the arrondissement number (01..20).
  postCode: (random, town) =>
    town.postCodePrefix + String(random.between(1, town.name === 'Paris' ? 20 : 99)).padStart(2, '0'),
  houseNumber: (random) => {
    const number = String(random.between(1, 150));
    return random.chance(0.05) ? `${number} bis` : number;
  },
};
