import { describe, expect, it } from 'vitest';
import { jsonBytes } from '../../src/refdata/json-bytes.ts';
import { randomValue, seeded } from '../support/json-documents.ts';

const stringified = (value: unknown) => Buffer.from(JSON.stringify(value));

describe('jsonBytes', () => {
  it('writes the bytes of JSON.stringify for any value, at the top and within a body of tasks', () => {
    for (let i = 0; i < 300; i += 1) {
      const next = seeded(i + 1);
      const document = randomValue(next);
      const body = { tasks: [document, randomValue(next), { id: `t${i}`, value: document }], last: document };
      expect(jsonBytes(document).equals(stringified(document)), JSON.stringify(document)).toBe(true);
      expect(jsonBytes(body).equals(stringified(body)), JSON.stringify(body)).toBe(true);
    }
  });

  it('leaves out what JSON.stringify leaves out, and writes null for it in an array', () => {
    const body = {
      a: undefined,
      b: () => 1,
      c: Symbol('c'),
      d: { toJSON: () => undefined },
      kept: 1,
      items: [undefined, () => 1, Symbol('i'), { toJSON: () => undefined }, 2],
      e: undefined,
    };
    expect(jsonBytes(body).toString()).toBe('{"kept":1,"items":[null,null,null,null,2]}');
    expect(jsonBytes(body).equals(stringified(body))).toBe(true);
  });

  it("writes what toJSON gives (a Date, a class's own), and the members of objects without a prototype", () => {
    class Money {
      toJSON() {
        return { amount: '1.00', currency: 'EUR' };
      }
    }
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { x: 1 });
    const body = { at: new Date(0), tasks: [new Money(), bare, new Map([[1, 2]])], bare };
    expect(jsonBytes(body).equals(stringified(body))).toBe(true);
  });

  it('refuses a value JSON.stringify writes nothing for, and fails on a cycle as it does', () => {
    expect(() => jsonBytes(undefined)).toThrow(TypeError);
    const task: Record<string, unknown> = { id: 't1' };
    const body = { tasks: [task] };
    task.body = body;
    expect(() => jsonBytes(body)).toThrow(TypeError);
  });
});
