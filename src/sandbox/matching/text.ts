// Text folding shared by names, streets and towns: the same folding runs on the query and
// on every record, so two spellings that fold to the same tokens compare as equal.
// One pass over the characters with a precomputed table: building the index folds a few
// hundred thousand strings, and regular-expression passes plus String.normalize cost several
// times more.

/** Letters that Unicode decomposition leaves alone but that have a usual ASCII spelling. */
const SPELLED_OUT: Readonly<Record<string, string>> = {
  ß: 'ss',
  ł: 'l',
  ø: 'o',
  æ: 'ae',
  œ: 'oe',
  đ: 'd',
  ı: 'i',
  þ: 'th',
  ð: 'd',
};

/** Characters that join rather than split ("D'Angelo", "l'Église"): apostrophes and accents. */
const JOINERS = new Set(["'", '’', '`', '´']);

const SEPARATOR = null;
type Piece = string | typeof SEPARATOR;

function foldCharacter(char: string): Piece {
  const lower = char.toLowerCase();
  const spelled = SPELLED_OUT[lower];
  if (spelled !== undefined) return spelled;
  let folded = '';
  for (const part of lower.normalize('NFD')) {
    const code = part.charCodeAt(0);
    if ((code >= 97 && code <= 122) || (code >= 48 && code <= 57)) folded += part;
    // Combining marks (accents) are dropped; anything else makes the character a separator.
    else if (!/\p{M}/u.test(part)) return SEPARATOR;
  }
  return folded === '' ? SEPARATOR : folded;
}

// Latin-1 and Latin Extended-A/B cover every country the sandbox generates; other characters
// are folded on first sight and remembered.
const TABLE_SIZE = 0x250;
const TABLE: Piece[] = Array.from({ length: TABLE_SIZE }, (_, code) =>
  foldCharacter(String.fromCharCode(code)),
);
const LATE_FOLDS = new Map<number, Piece>();

function pieceOf(text: string, i: number): Piece {
  const code = text.charCodeAt(i);
  if (code < TABLE_SIZE) return TABLE[code] ?? SEPARATOR;
  // Combining marks of already decomposed input join the letter before them.
  if (code >= 0x300 && code <= 0x36f) return '';
  let piece = LATE_FOLDS.get(code);
  if (piece === undefined) {
    piece = foldCharacter(text.charAt(i));
    LATE_FOLDS.set(code, piece);
  }
  return piece;
}

const isLetter = (code: number): boolean => code >= 97 && code <= 122;

/**
 * Folded tokens of `text`: lower-case ASCII letters and digits, diacritics dropped, ß, ł, ø
 * and similar letters spelled out. A dot between letters is an abbreviation dot and joins
 * ("B.V." -> "bv", "S.p.A." -> "spa", "o.o." -> "oo"); other dots separate ("Str.5").
 */
export function tokenize(text: string): string[] {
  const tokens: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const piece = pieceOf(text, i);
    if (piece !== SEPARATOR) {
      current += piece;
      continue;
    }
    const char = text.charAt(i);
    if (JOINERS.has(char)) continue;
    if (
      char === '.' &&
      current !== '' &&
      isLetter(current.charCodeAt(current.length - 1)) &&
      i + 1 < text.length
    ) {
      const next = pieceOf(text, i + 1);
      if (next !== SEPARATOR && next !== '' && isLetter(next.charCodeAt(0))) continue;
    }
    if (current !== '') tokens.push(current);
    current = '';
  }
  if (current !== '') tokens.push(current);
  return tokens;
}

/** The folded tokens of `text` written together: "12 bis" -> "12bis", "Frankfurt am Main" -> "frankfurtammain". */
export const foldedKey = (text: string): string => tokenize(text).join('');

function isCompact(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (!((code >= 48 && code <= 57) || (code >= 65 && code <= 90))) return false;
  }
  return true;
}

/** Upper-case letters and digits only: "DE 123.456.789" and "de123456789" are one identifier. */
export function compactCode(text: string): string {
  // Most codes are compact already; skipping the rewrite keeps the string shared, not copied.
  return isCompact(text) ? text : text.replace(/[^0-9A-Za-z]/g, '').toUpperCase();
}
