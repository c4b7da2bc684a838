// Pseudo-random JSON documents for tests of code that writes or reads JSON as JSON.stringify
// and JSON.parse do: every kind of value, escapes, characters beyond ASCII and Latin-1.

/** A deterministic pseudo-random JSON value: nested objects and arrays, escapes, numbers of every form. */
export function randomValue(next: () => number, depth = 0): unknown {
  const pick = Math.floor(next() * (depth > 3 ? 5 : 7));
  const strings = [
    '',
    'plain',
    'quote " inside',
    'back\\slash\\',
    'line\nbreak',
    'é ü 中文 😀',
    '\\"',
    'tab\tend',
  ];
  const numbers = [0, -0.5, 1e21, 123456789, -42, 3.14159, 1e-7];
  switch (pick) {
    case 0:
      return strings[Math.floor(next() * strings.length)];
    case 1:
      return numbers[Math.floor(next() * numbers.length)];
    case 2:
      return next() < 0.5;
    case 3:
      return null;
    case 4:
      return `s${Math.floor(next() * 1000)}`;
    case 5:
      return Array.from({ length: Math.floor(next() * 4) }, () => randomValue(next, depth + 1));
    default:
      return Object.fromEntries(
        Array.from({ length: Math.floor(next() * 4) }, (_, i) => [
          `${strings[Math.floor(next() * strings.length)]}${i}`,
          randomValue(next, depth + 1),
        ]),
      );
  }
}

/** A deterministic pseudo-random number generator (an LCG), the same for the same seed. */
export function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}
