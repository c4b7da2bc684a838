/**
 * Memoises a string function. Streets, towns and legal forms repeat across records and
 * queries (a country has a few hundred streets, not a hundred thousand), so their
 * normalisation is worth remembering; the memo is emptied when it reaches `maxEntries` so
 * that a long-running sandbox fed with arbitrary queries does not grow without bound.
 */
export function memoize<T>(compute: (key: string) => T, maxEntries = 50_000): (key: string) => T {
  const memo = new Map<string, T>();
  return (key) => {
    const known = memo.get(key);
    if (known !== undefined || memo.has(key)) return known as T;
    if (memo.size >= maxEntries) memo.clear();
    const value = compute(key);
    memo.set(key, value);
    return value;
  };
}
