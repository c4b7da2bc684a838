// String distances used by the scorer. Both are bounded: the scorer only cares whether two
// strings are within a few edits, so the loops stop as soon as that is ruled out. Rows are
// reused between calls because the scorer calls this thousands of times per lookup.

let width = 64;
let beforePrevious = new Int32Array(width);
let previous = new Int32Array(width);
let current = new Int32Array(width);

/** Whether `a` and `b` differ by exactly one substitution, insertion, deletion or adjacent swap. */
function oneEditApart(a: string, b: string): boolean {
  const lengthA = a.length;
  const lengthB = b.length;
  let start = 0;
  while (start < lengthA && start < lengthB && a.charCodeAt(start) === b.charCodeAt(start)) start++;
  if (lengthA === lengthB) {
    if (start === lengthA) return false;
    if (a.slice(start + 1) === b.slice(start + 1)) return true;
    return (
      start + 1 < lengthA &&
      a.charCodeAt(start) === b.charCodeAt(start + 1) &&
      a.charCodeAt(start + 1) === b.charCodeAt(start) &&
      a.slice(start + 2) === b.slice(start + 2)
    );
  }
  if (lengthA === lengthB + 1) return a.slice(start + 1) === b.slice(start);
  if (lengthB === lengthA + 1) return b.slice(start + 1) === a.slice(start);
  return false;
}

const counts = new Int32Array(65_536);

/**
 * A lower bound of the edit distance from the letters alone: a substitution changes two
 * letter counts by one, an insertion or deletion one, a transposition none. Cheaper than the
 * distance itself, and it rules out most unrelated pairs.
 */
function fewestEdits(a: string, b: string): number {
  for (let i = 0; i < a.length; i++) counts[a.charCodeAt(i)] = (counts[a.charCodeAt(i)] ?? 0) + 1;
  for (let i = 0; i < b.length; i++) counts[b.charCodeAt(i)] = (counts[b.charCodeAt(i)] ?? 0) - 1;
  // Each letter's surplus is added once and its count reset, leaving the table zeroed.
  let difference = 0;
  for (const text of [a, b]) {
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      difference += Math.abs(counts[code] ?? 0);
      counts[code] = 0;
    }
  }
  return Math.ceil(difference / 2);
}

/**
 * Optimal string alignment distance (Levenshtein plus adjacent transposition), or
 * `max + 1` when it exceeds `max`.
 */
export function editDistance(a: string, b: string, max: number): number {
  if (a === b) return 0;
  const lengthA = a.length;
  const lengthB = b.length;
  if (Math.abs(lengthA - lengthB) > max) return max + 1;
  if (oneEditApart(a, b)) return 1;
  if (max < 2 || fewestEdits(a, b) > max) return max + 1;
  if (width <= lengthB) {
    width = lengthB * 2 + 1;
    [beforePrevious, previous, current] = [
      new Int32Array(width),
      new Int32Array(width),
      new Int32Array(width),
    ];
  }
  for (let j = 0; j <= lengthB; j++) previous[j] = j;
  for (let i = 1; i <= lengthA; i++) {
    current[0] = i;
    let rowMinimum = i;
    const charA = a.charCodeAt(i - 1);
    for (let j = 1; j <= lengthB; j++) {
      const charB = b.charCodeAt(j - 1);
      // Typed-array reads never miss inside these bounds; `?? 0` only satisfies the type checker.
      const substitution = (previous[j - 1] ?? 0) + (charA === charB ? 0 : 1);
      let best = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution);
      if (i > 1 && j > 1 && charA === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === charB) {
        best = Math.min(best, (beforePrevious[j - 2] ?? 0) + 1);
      }
      current[j] = best;
      if (best < rowMinimum) rowMinimum = best;
    }
    if (rowMinimum > max) return max + 1;
    const oldest = beforePrevious;
    beforePrevious = previous;
    previous = current;
    current = oldest;
  }
  return Math.min(previous[lengthB] ?? 0, max + 1);
}

/**
 * 1 for equal strings, falling linearly with the edit distance relative to the longer
 * string; 0 when more than `maxShare` of the longer string would have to change.
 */
export function editSimilarity(a: string, b: string, maxShare = 0.5): number {
  if (a === b) return 1;
  const longest = Math.max(a.length, b.length);
  if (longest === 0) return 1;
  const max = Math.floor(longest * maxShare);
  const distance = editDistance(a, b, max);
  return distance > max ? 0 : 1 - distance / longest;
}
