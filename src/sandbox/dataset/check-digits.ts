// Check digits of the national identifiers the generator produces. Real registers reject
// numbers whose check digit is wrong, so client-side validators in the pipeline may do the
// same; sandbox identifiers therefore carry valid check digits.

const digitAt = (value: string, i: number): number => value.charCodeAt(i) - 48;

/** Luhn digit to append to `payload` (FR SIREN/SIRET). */
export function luhnCheckDigit(payload: string): number {
  let total = 0;
  for (let i = 0; i < payload.length; i++) {
    const digit = digitAt(payload, payload.length - 1 - i);
    // Doubling starts at the rightmost payload digit, since the check digit will follow it.
    const doubled = i % 2 === 0 ? digit * 2 : digit;
    total += doubled > 9 ? doubled - 9 : doubled;
  }
  return (10 - (total % 10)) % 10;
}

export function isLuhnValid(value: string): boolean {
  return luhnCheckDigit(value.slice(0, -1)) === Number(value.slice(-1));
}

/** Weighted sum modulo 11 of `payload` (CH UID, PL NIP and REGON, NL RSIN). */
export function weightedMod11(payload: string, weights: readonly number[]): number {
  let total = 0;
  for (let i = 0; i < payload.length; i++) total += digitAt(payload, i) * (weights[i] ?? 0);
  return total % 11;
}

/** ISO 7064 MOD 11,10 (German VAT number). */
export function iso7064Mod11x10(payload: string): number {
  let product = 10;
  for (let i = 0; i < payload.length; i++) {
    let total = (digitAt(payload, i) + product) % 10;
    if (total === 0) total = 10;
    product = (2 * total) % 11;
  }
  const check = 11 - product;
  return check === 10 ? 0 : check;
}

/** ISO 7064 MOD 97-10 remainder of an alphanumeric string, letters as 10..35 (LEI). */
export function mod97(value: string): number {
  let remainder = 0;
  for (const char of value) {
    const code = char.charCodeAt(0);
    const number = code >= 65 ? code - 55 : code - 48;
    remainder = (remainder * (number > 9 ? 100 : 10) + number) % 97;
  }
  return remainder;
}

/** Two check characters that make `payload + check` satisfy mod97 = 1 (LEI, ISO 17442). */
export function leiCheckDigits(payload: string): string {
  return String(98 - mod97(`${payload}00`)).padStart(2, '0');
}

/** Key of a French VAT number for a SIREN. */
export const frenchVatKey = (siren: string): string =>
  String((12 + 3 * (Number(siren) % 97)) % 97).padStart(2, '0');

/** Check pair of a GB VAT number: weights 8..2 over seven digits, plus the pair, is divisible by 97. */
export function britishVatCheck(payload: string): string {
  let weighted = 0;
  for (let i = 0; i < payload.length; i++) weighted += digitAt(payload, i) * (8 - i);
  return String((97 - (weighted % 97)) % 97).padStart(2, '0');
}

/** Control digit of a Spanish CIF's seven-digit body. */
export function spanishCifControl(body: string): number {
  let total = 0;
  for (let i = 0; i < body.length; i++) {
    const digit = digitAt(body, i);
    total += i % 2 === 1 ? digit : Math.floor((digit * 2) / 10) + ((digit * 2) % 10);
  }
  return (10 - (total % 10)) % 10;
}

/** Check digit of an Italian partita IVA's first ten digits. */
export function italianVatCheck(payload: string): number {
  let total = 0;
  for (let i = 0; i < payload.length; i++) {
    const digit = digitAt(payload, i);
    total += i % 2 === 0 ? digit : digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
  }
  return (10 - (total % 10)) % 10;
}

/** Check digit of an Austrian UID (ATU + seven digits + check). */
export function austrianVatCheck(payload: string): number {
  let total = 0;
  for (let i = 0; i < payload.length; i++) {
    const digit = digitAt(payload, i);
    total += i % 2 === 0 ? digit : Math.floor((digit * 2) / 10) + ((digit * 2) % 10);
  }
  return (10 - ((total + 4) % 10)) % 10;
}
