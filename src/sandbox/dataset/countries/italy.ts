import type { CountryProfile } from './country-profile.ts';

export const italy: CountryProfile = {
  code: 'IT',
  weight: 10,
  legalForms: [
    { short: 'S.r.l.', long: 'Società a responsabilità limitata', weight: 70 },
    { short: 'S.p.A.', long: 'Società per azioni', weight: 15 },
    { short: 'S.n.c.', long: 'Società in nome collettivo', weight: 8 },
    { short: 'S.a.s.', long: 'Società in accomandita semplice', weight: 7 },
  ],
  surnames: [
    'Rossi', 'Russo', 'Ferrari', 'Esposito', 'Bianchi', 'Romano', 'Colombo', 'Ricci', 'Marino', 'Greco',
    'Bruno', 'Gallo', 'Conti', 'De Luca', 'Mancini', 'Costa', 'Giordano', 'Rizzo', 'Lombardi', 'Moretti',
    'Barbieri', 'Fontana', 'Santoro', 'Mariani', 'Rinaldi', 'Caruso', 'Ferrara', 'Galli', 'Martini', 'Leone',
    'Longo', 'Gentile', 'Martinelli', 'Vitale', 'Lombardo', 'Serra', 'Coppola', 'De Santis', "D'Angelo", 'Marchetti',
    'Parisi', 'Villa', 'Conte', 'Ferraro', 'Ferri', 'Fabbri', 'Bianco', 'Marini', 'Grasso', 'Valentini',
    'Messina', 'Sala', 'De Angelis', 'Gatti', 'Pellegrini', 'Palumbo', 'Sanna', 'Farina', 'Rizzi', 'Monti',
  ],
  industries: [
    { word: 'Logistica', nace: 'H' }, { word: 'Trasporti', nace: 'H' }, { word: 'Costruzioni', nace: 'F' },
    { word: 'Informatica', nace: 'J' }, { word: 'Consulenze', nace: 'M' }, { word: 'Distribuzione', nace: 'G' },
    { word: 'Immobiliare', nace: 'L' }, { word: 'Impianti', nace: 'F' }, { word: 'Ingegneria', nace: 'M' },
    { word: 'Alimentari', nace: 'C' }, { word: 'Meccanica', nace: 'C' }, { word: 'Tipografia', nace: 'C' },
    { word: 'Imballaggi', nace: 'C' }, { word: 'Energia', nace: 'D' }, { word: 'Pulizie', nace: 'N' },
    { word: 'Servizi', nace: 'N' }, { word: 'Arredamenti', nace: 'C' }, { word: 'Tessile', nace: 'C' },
    { word: 'Calzature', nace: 'C' }, { word: 'Ceramiche', nace: 'C' }, { word: 'Vini', nace: 'C' },
    { word: 'Internazionale', nace: 'G' }, { word: 'Elettronica', nace: 'C' },
  ],
  brandPrefixes: [
    'Alpi', 'Adria', 'Tirren', 'Lario', 'Etrus', 'Italo', 'Medi', 'Brianza', 'Lombard', 'Sabaud',
    'Veneto', 'Tosco', 'Sicul', 'Dolomit',
  ],
  brandSuffixes: ['tec', 'plast', 'mec', 'tex', 'net', 'med', 'data', 'form', 'line', 'sud'],
  conjunctions: ['&', 'e'],
  familyTemplate: 'Fratelli {surname}',
  towns: [
    { name: 'Roma', postCodePrefix: '001', region: 'IT-62' },
    { name: 'Milano', postCodePrefix: '201', region: 'IT-25' },
    { name: 'Napoli', postCodePrefix: '801', region: 'IT-72' },
    { name: 'Torino', postCodePrefix: '101', region: 'IT-21' },
    { name: 'Palermo', postCodePrefix: '901', region: 'IT-82' },
    { name: 'Genova', postCodePrefix: '161', region: 'IT-42' },
    { name: 'Bologna', postCodePrefix: '401', region: 'IT-45' },
    { name: 'Firenze', postCodePrefix: '501', region: 'IT-52' },
    { name: 'Bari', postCodePrefix: '701', region: 'IT-75' },
    { name: 'Catania', postCodePrefix: '951', region: 'IT-82' },
    { name: 'Venezia', postCodePrefix: '301', region: 'IT-34' },
    { name: 'Verona', postCodePrefix: '371', region: 'IT-34' },
    { name: 'Padova', postCodePrefix: '351', region: 'IT-34' },
    { name: 'Trieste', postCodePrefix: '341', region: 'IT-36' },
    { name: 'Brescia', postCodePrefix: '251', region: 'IT-25' },
    { name: 'Parma', postCodePrefix: '431', region: 'IT-45' },
  ],
  streetRoots: [
    'Roma', 'Garibaldi', 'Giuseppe Mazzini', 'Vittorio Emanuele II', 'Dante Alighieri', 'Cavour', 'della Repubblica',
    'Giuseppe Verdi', 'Alessandro Manzoni', 'XX Settembre', 'Guglielmo Marconi', 'della Libertà', 'Milano',
    'Dante', 'San Francesco', 'Matteotti', 'Aldo Moro', 'IV Novembre',
  ],
  streetTemplates: [
    { template: 'Via {root}', weight: 70 },
    { template: 'Corso {root}', weight: 10 },
    { template: 'Piazza {root}', weight: 10 },
    { template: 'Viale {root}', weight: 10 },
  ],
  numberBeforeStreet: false,
  postCode: (random, town) => town.postCodePrefix + random.digits(2),
  houseNumber: (random) => {
    const number = String(random.between(1, 150));
    return random.chance(0.08) ? `${number}/${random.fromAlphabet('ABC', 1)}` : number;
  },
};
