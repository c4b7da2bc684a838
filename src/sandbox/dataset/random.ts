// A small seeded PRNG (sfc32, seeded through splitmix32) instead of Math.random or faker's
// generator: the sandbox must produce the same dataset for the same seed on every Node
// version and faker release, and sfc32 is several times faster than a Mersenne twister.

const DIGITS = '0123456789';
const UPPER_ALPHANUMERIC = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';

export interface Weighted {
  readonly weight: number;
}

export class Random {
  #a: number;
  #b: number;
  #c: number;
  #d: number;

  constructor(seed: number) {
    let state = seed >>> 0;
    const splitmix = (): number => {
      state = (state + 0x9e3779b9) >>> 0;
      let z = state;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.#a = splitmix();
    this.#b = splitmix();
    this.#c = splitmix();
    this.#d = splitmix();
    // The first outputs of sfc32 are weakly mixed; discard them.
    for (let i = 0; i < 12; i++) this.nextUint32();
  }

  nextUint32(): number {
    const t = (((this.#a + this.#b) | 0) + this.#d) | 0;
    this.#d = (this.#d + 1) | 0;
    this.#a = this.#b ^ (this.#b >>> 9);
    this.#b = (this.#c + (this.#c << 3)) | 0;
    this.#c = (this.#c << 21) | (this.#c >>> 11);
    this.#c = (this.#c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.nextUint32() / 4294967296;
  }

  /** Uniform integer in [0, maxExclusive). */
  int(maxExclusive: number): number {
    return Math.floor(this.next() * maxExclusive);
  }

  /** Uniform integer in [min, max], both inclusive. */
  between(min: number, max: number): number {
    return min + this.int(max - min + 1);
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    return itemAt(items, this.int(items.length));
  }

  weighted<T extends Weighted>(items: readonly T[]): T {
    let total = 0;
    for (const item of items) total += item.weight;
    let roll = this.next() * total;
    for (const item of items) {
      roll -= item.weight;
      if (roll < 0) return item;
    }
    return itemAt(items, items.length - 1);
  }

  digits(length: number): string {
    return this.fromAlphabet(DIGITS, length);
  }

  alphanumeric(length: number): string {
    return this.fromAlphabet(UPPER_ALPHANUMERIC, length);
  }

  fromAlphabet(alphabet: string, length: number): string {
    let out = '';
    for (let i = 0; i < length; i++) out += alphabet.charAt(this.int(alphabet.length));
    return out;
  }

  /** A new generator whose stream depends only on this one's current state. */
  fork(): Random {
    return new Random(this.nextUint32());
  }
}

export function itemAt<T>(items: readonly T[], index: number): T {
  const item = items[index];
  if (item === undefined) throw new RangeError(`index ${index} outside a list of ${items.length}`);
  return item;
}
