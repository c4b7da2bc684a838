// Legal forms in every spelling the sandbox's countries use, each mapped to one code, so
// that "Gesellschaft mit beschränkter Haftung" = "GmbH" and "Limited" = "Ltd". Variants are
// written as folded tokens (see text.ts): "S.à r.l." folds to "sa rl", "Sp. z o.o." to "sp z oo".

import { memoize } from './memo.ts';
import { editDistance } from './similarity.ts';

const VARIANTS: Readonly<Record<string, readonly string[]>> = {
  GMBH_CO_KG: ['gmbh co kg', 'gmbh co kommanditgesellschaft', 'gesellschaft mit beschrankter haftung co kg'],
  GMBH: ['gmbh', 'gesmbh', 'ges mbh', 'gesellschaft mit beschrankter haftung'],
  UG: [
    'ug',
    'ug haftungsbeschrankt',
    'unternehmergesellschaft',
    'unternehmergesellschaft haftungsbeschrankt',
  ],
  AG: ['ag', 'aktiengesellschaft'],
  KG: ['kg', 'kommanditgesellschaft'],
  OHG: ['ohg', 'offene handelsgesellschaft'],
  OG: ['og', 'offene gesellschaft'],
  EK: ['ek', 'eingetragener kaufmann', 'eingetragene kauffrau'],
  SAS: [
    'sas',
    'societe par actions simplifiee',
    // The Italian "S.a.s." shares the abbreviation; only equality of codes matters here.
    'societa in accomandita semplice',
  ],
  SASU: ['sasu', 'societe par actions simplifiee unipersonnelle'],
  SARL: ['sarl', 'sa rl', 'societe a responsabilite limitee'],
  EURL: ['eurl', 'entreprise unipersonnelle a responsabilite limitee'],
  SNC: ['snc', 'societe en nom collectif', 'societa in nome collettivo'],
  SA: ['sa', 'societe anonyme', 'sociedad anonima', 'spolka akcyjna'],
  LTD: ['ltd', 'limited'],
  PLC: ['plc', 'public limited company'],
  LLP: ['llp', 'limited liability partnership'],
  INC: ['inc', 'incorporated'],
  LLC: ['llc', 'limited liability company'],
  CORP: ['corp', 'corporation'],
  BV: ['bv', 'besloten vennootschap', 'besloten vennootschap met beperkte aansprakelijkheid'],
  NV: ['nv', 'naamloze vennootschap'],
  VOF: ['vof', 'vennootschap onder firma'],
  SL: ['sl', 'sociedad limitada', 'sociedad de responsabilidad limitada'],
  SLU: ['slu', 'sociedad limitada unipersonal'],
  SRL: ['srl', 'societa a responsabilita limitata'],
  SPA: ['spa', 'societa per azioni'],
  SPZOO: ['sp z oo', 'spzoo', 'spolka z ograniczona odpowiedzialnoscia'],
  SPK: ['spk', 'sp k', 'spolka komandytowa'],
  SPJ: ['spj', 'sp j', 'spolka jawna'],
};

interface Variant {
  readonly tokens: readonly string[];
  readonly code: string;
}

const CODE_BY_VARIANT = new Map<string, string>();
const VARIANTS_BY_LENGTH = new Map<number, Variant[]>();
let longestVariant = 1;
for (const [code, variants] of Object.entries(VARIANTS)) {
  for (const written of variants) {
    const variant = { tokens: written.split(' '), code };
    CODE_BY_VARIANT.set(written, code);
    const sameLength = VARIANTS_BY_LENGTH.get(variant.tokens.length) ?? [];
    sameLength.push(variant);
    VARIANTS_BY_LENGTH.set(variant.tokens.length, sameLength);
    longestVariant = Math.max(longestVariant, variant.tokens.length);
  }
}

/** Code of a legal form written on its own ("GmbH", "Sociedad Limitada"), if known. */
export function legalFormCode(tokens: readonly string[]): string | undefined {
  return CODE_BY_VARIANT.get(tokens.join(' ')) ?? misspeltLegalForm(tokens);
}

const maxEditsFor = (word: string): number => (word.length >= 8 ? 2 : 1);

/**
 * Whether `written` is a misspelling of the legal-form word `form`. Words of five letters or
 * more may each be misspelt ("Gesellscehaft mit beschraenkter Hafttung"). A short word may
 * only be the one misspelt word of its form ("Sp. z ok.o."), and a form of one short word
 * ("GmcbH", "mGbH") must keep its first two letters, in either order, so that names such as
 * "Carl" are not taken for "SARL".
 */
function isMisspelt(written: string, form: string, onlyWordOfForm: boolean, onlyMismatch: boolean): boolean {
  if (Math.abs(written.length - form.length) > maxEditsFor(form)) return false;
  if (form.length >= 5) return editDistance(written, form, maxEditsFor(form)) <= maxEditsFor(form);
  if (!onlyMismatch || form.length < 2) return false;
  if (onlyWordOfForm) {
    const sameStart =
      written.charAt(0) === form.charAt(0) ||
      (written.charAt(0) === form.charAt(1) && written.charAt(1) === form.charAt(0));
    if (form.length < 4 || !sameStart) return false;
  }
  return editDistance(written, form, 1) <= 1;
}

/** The code of `tokens` read as a legal form with misspelt words (see isMisspelt), if any. */
function misspeltLegalForm(tokens: readonly string[]): string | undefined {
  return misspeltLegalFormOf(tokens.join(' '));
}

// Names end in the same few words over and over; remember what each ending reads as.
const misspeltLegalFormOf = memoize((written: string): string | undefined => {
  const tokens = written.split(' ');
  for (const variant of VARIANTS_BY_LENGTH.get(tokens.length) ?? []) {
    let mismatches = 0;
    for (let i = 0; i < tokens.length; i++) if (variant.tokens[i] !== tokens[i]) mismatches++;
    if (mismatches === 0) return variant.code;
    const matches = variant.tokens.every(
      (form, i) =>
        form === tokens[i] || isMisspelt(tokens[i] ?? '', form, tokens.length === 1, mismatches === 1),
    );
    if (matches) return variant.code;
  }
  return undefined;
});

export interface LegalFormSplit {
  /** Name tokens before the legal form. */
  readonly tokens: readonly string[];
  readonly legalForm: string | undefined;
}

/**
 * Splits the legal form off the end of a name, longest spelling first ("GmbH & Co. KG" before
 * "KG", and a misspelt "GmHb & Co. KG" before "KG"). A name that would be left empty keeps its
 * tokens: "AG" alone is a name, not a form.
 */
export function splitLegalForm(tokens: readonly string[]): LegalFormSplit {
  for (let length = Math.min(longestVariant, tokens.length - 1); length >= 1; length--) {
    const suffix = tokens.slice(tokens.length - length);
    const code = CODE_BY_VARIANT.get(suffix.join(' ')) ?? misspeltLegalForm(suffix);
    if (code !== undefined) return { tokens: tokens.slice(0, tokens.length - length), legalForm: code };
  }
  return { tokens, legalForm: undefined };
}
