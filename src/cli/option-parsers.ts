// Parsers of command-line option values shared by the commands: each refuses a bad value
// with a message naming the option's rule, which commander prints after its own "option
// '--port <port>' argument '0x10' is invalid." and exits 1 on. Numbers are read as the
// environment reads them: decimal digits only. Their rule names the flag as typed (`flag`,
// e.g. '--port') and says "in decimal digits": "from 0 to 65535" alone read as if 0x10, 16
// to a programmer, were out of range.
import { InvalidArgumentError } from 'commander';
import { decimalNumber } from '../config/decimal.ts';
import { isCalendarDay } from '../iso-time.ts';

export const nonEmpty = (value: string): string => {
  if (value.trim() === '') throw new InvalidArgumentError('must not be empty');
  return value;
};

export const wholeNumber =
  (flag: string, min: number, max?: number) =>
  (value: string): number => {
    const n = decimalNumber(value, true) ?? Number.NaN;
    if (!Number.isSafeInteger(n) || n < min || (max !== undefined && n > max)) {
      const range = max === undefined ? `, ${min} or more` : ` from ${min} to ${max}`;
      throw new InvalidArgumentError(`${flag} must be a whole number in decimal digits${range}.`);
    }
    return n;
  };

/** A repeatable (or variadic) --tag: unique values, at most `maxTags`. */
export const tagCollector =
  (maxTags: number) =>
  (value: string, previous: string[] | undefined): string[] => {
    const tags = previous ?? [];
    const tag = nonEmpty(value);
    if (tags.includes(tag))
      throw new InvalidArgumentError(`${tag} is given twice; tags must be unique (at most ${maxTags}).`);
    if (tags.length === maxTags)
      throw new InvalidArgumentError(`one tag too many; at most ${maxTags} unique tags are allowed.`);
    return [...tags, tag];
  };

/** A share of something: more than 0 (or 0 itself, if `zero` says it means none), at most 1. */
export const share =
  (flag: string, { zero = false } = {}) =>
  (value: string): number => {
    const n = decimalNumber(value, false) ?? Number.NaN;
    if (!((zero ? n >= 0 : n > 0) && n <= 1))
      throw new InvalidArgumentError(
        `${flag} must be a number in decimal digits${zero ? ' from 0 to 1' : ', more than 0 and at most 1'}.`,
      );
    return n;
  };

/** An ISO 8601 date or date and time (`2030-01-31`, `2030-01-31T02:00:00Z`), as epoch ms. */
export const isoTime =
  (name: string) =>
  (value: string): number => {
    const rule = `${name} must be an ISO 8601 date or time, e.g. 2030-01-31T02:00:00Z`;
    const text = value.trim();
    const date = /^(\d{4})-(\d{2})-(\d{2})(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$/.exec(text);
    const ms = date ? Date.parse(text) : Number.NaN;
    if (Number.isNaN(ms)) throw new InvalidArgumentError(`${rule}.`);
    // Date.parse rolls a day the month does not have over into the next one (2030-02-30 is
    // March 2): a --start-at or --not-looked-up-since two days off, taken without a word.
    const [, year, month, day] = date as RegExpExecArray;
    if (!isCalendarDay(Number(year), Number(month), Number(day)))
      throw new InvalidArgumentError(`${rule}: ${year}-${month}-${day} is not a day of the calendar.`);
    return ms;
  };

/** A repeatable (or variadic) option whose every value must pass `check`. */
export const listOf =
  (check: (value: string) => string) =>
  (value: string, previous: string[] | undefined): string[] => {
    const item = check(value);
    return (previous ?? []).includes(item) ? (previous ?? []) : [...(previous ?? []), item];
  };
