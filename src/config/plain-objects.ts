// Small operations on the plain JSON-like objects the configuration sources produce.

export type PlainObject = Record<string, unknown>;

export const isPlainObject = (value: unknown): value is PlainObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function hasPath(value: unknown, path: readonly PropertyKey[]): boolean {
  let current = value;
  for (const key of path) {
    if (typeof current !== 'object' || current === null || !Object.hasOwn(current, key)) return false;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current !== undefined;
}

/** Sets a nested value, creating objects on the way and replacing anything that is not one. */
export function setPath(target: PlainObject, path: readonly string[], value: unknown): void {
  const [key, ...rest] = path;
  if (key === undefined) return;
  if (rest.length === 0) {
    target[key] = value;
    return;
  }
  const child = target[key];
  const next: PlainObject = isPlainObject(child) ? child : {};
  target[key] = next;
  setPath(next, rest, value);
}

/**
 * Objects merge key by key; anything else (arrays included) is replaced whole, so a
 * broker list from the environment replaces the file's list instead of extending it.
 * `undefined` never overrides: a CLI flag that was not given leaves the value alone.
 */
export function deepMerge(base: PlainObject, overlay: PlainObject): PlainObject {
  const merged: PlainObject = { ...base };
  for (const [key, value] of Object.entries(overlay)) {
    if (value === undefined) continue;
    const current = merged[key];
    merged[key] = isPlainObject(current) && isPlainObject(value) ? deepMerge(current, value) : value;
  }
  return merged;
}

export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
