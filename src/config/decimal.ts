// Numbers as an operator types them into an environment variable or a command-line flag:
// decimal digits. JavaScript's Number() also reads 0x10, 0b11, 0o7 and 1e3, and reads ''
// as 0, so a slip would quietly become another setting instead of being refused.

const INTEGER = /^-?\d+$/;
const DECIMAL = /^-?(?:\d+(?:\.\d+)?|\.\d+)$/;

/** The number `text` writes in decimal digits (a whole one if `integer`), or undefined when it writes none. */
export function decimalNumber(text: string, integer: boolean): number | undefined {
  const trimmed = text.trim();
  return (integer ? INTEGER : DECIMAL).test(trimmed) ? Number(trimmed) : undefined;
}
