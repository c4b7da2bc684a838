import { describe, expect, it } from 'vitest';
import { JsonCursor } from '../../src/bulk/json-cursor.ts';
import { randomValue, seeded } from '../support/json-documents.ts';

const documents = Array.from({ length: 300 }, (_, i) => randomValue(seeded(i + 1)));

describe('JsonCursor', () => {
  it('reads any value as JSON.parse does, compact or indented', () => {
    for (const document of documents) {
      for (const text of [JSON.stringify(document), JSON.stringify(document, null, 2)]) {
        const cursor = new JsonCursor(Buffer.from(` ${text}\n`));
        expect(cursor.value()).toEqual(JSON.parse(text));
        cursor.end();
      }
    }
  });

  it('steps over any value to exactly where it ends', () => {
    for (const document of documents) {
      const text = JSON.stringify(document, null, 1);
      const cursor = new JsonCursor(Buffer.from(`[${text} , "after"]`));
      const read: unknown[] = [];
      let first = true;
      cursor.array(() => {
        if (first) cursor.skip();
        else read.push(cursor.value());
        first = false;
      });
      cursor.end();
      expect(read).toEqual(['after']);
    }
  });

  it('walks the members asked for and gives raw text as written', () => {
    const cursor = new JsonCursor(
      Buffer.from('{ "a" : [1, {"b": "x\\"y"}], "skip": {"deep": [[]]}, "raw": {"k": 1.0} }'),
    );
    const seen: Record<string, unknown> = {};
    cursor.object((key) => {
      if (key === 'a') cursor.array(() => (seen[`a${Object.keys(seen).length}`] = cursor.value()));
      else if (key === 'raw') seen.raw = cursor.raw();
      else cursor.skip();
    });
    cursor.end();
    expect(seen).toEqual({ a0: 1, a1: { b: 'x"y' }, raw: '{"k": 1.0}' });
  });

  it('tells apart member names whose bytes hash alike ("Aa" and "BB"), however often they come', () => {
    const keys: string[] = [];
    for (const text of ['{"Aa": 1, "BB": 2}', '{"BB": 3, "Aa": 4, "BB": 5}']) {
      const cursor = new JsonCursor(Buffer.from(text));
      cursor.object((key) => {
        keys.push(key);
        cursor.skip();
      });
    }
    expect(keys).toEqual(['Aa', 'BB', 'BB', 'Aa', 'BB']);
  });

  it('reads a string as JSON.parse does (plain, escaped, not ASCII) and null as null; refuses any other value', () => {
    const strings = [
      '',
      'OPENREG:GB-SC643903',
      'quote " inside',
      'back\\slash',
      'é ü 中文 😀',
      'line\nbreak',
      '\u0000',
    ];
    const cursor = new JsonCursor(Buffer.from(JSON.stringify([...strings, null])));
    const read: unknown[] = [];
    cursor.array(() => read.push(cursor.string()));
    cursor.end();
    expect(read).toEqual([...strings, null]);
    for (const text of ['1', 'true', '{}', '[]', '"open'])
      expect(() => new JsonCursor(Buffer.from(text)).string(), text).toThrow(SyntaxError);
  });

  it('takes null where an object or an array is asked for as one without members', () => {
    const members: string[] = [];
    new JsonCursor(Buffer.from('null')).object((key) => members.push(key));
    new JsonCursor(Buffer.from(' null')).array(() => members.push('item'));
    expect(members).toEqual([]);
  });

  it('steps over numbers of every form and the three keywords', () => {
    const text =
      '{"a": -0.5e-3, "b": 1E+2, "c": 0, "d": -0, "e": 12.25, "f": true, "g": false, "h": null, "i": 7}';
    const cursor = new JsonCursor(Buffer.from(text));
    const last: unknown[] = [];
    cursor.object((key) => (key === 'i' ? last.push(cursor.value()) : cursor.skip()));
    cursor.end();
    expect(last).toEqual([7]);
  });

  it.each([
    ['an unterminated string', '{"a": "open}'],
    ['a string whose closing quote is escaped', '{"a": "x\\"}'],
    ['a bracket closed by the other kind', '{"a": [1, 2}}'],
    ['an unclosed skipped object', '{"a": {"b": 1'],
    ['a misspelt literal', '{"a": tru}'],
    ['a number that is not JSON', '{"a": 01}'],
    ['a lone minus', '{"a": -}'],
    ['a number ending in its point', '{"a": 1.}'],
    ['a number starting with its point', '{"a": .5}'],
    ['a number with a plus sign', '{"a": +1}'],
    ['an exponent without digits', '{"a": 1e+}'],
    ['a literal run on into letters', '{"a": nullx}'],
    ['a literal cut short', '{"a": fals}'],
    ['a missing comma', '{"a": 1 "b": 2}'],
    ['a missing colon', '{"a" 1}'],
    ['a raw line break in a member name', '{"a\nb": 1}'],
    ['trailing text', '{"a": 1} x'],
    ['an empty text', ''],
  ])('refuses %s', (_, text) => {
    const cursor = new JsonCursor(Buffer.from(text));
    expect(() => {
      cursor.object(() => cursor.skip());
      cursor.end();
    }).toThrow(SyntaxError);
  });

  it('gives raw text of any value exactly as written, white space around it left out', () => {
    for (const document of documents) {
      const text = JSON.stringify(document, null, 1);
      const cursor = new JsonCursor(Buffer.from(`[ ${text} \n, 1]`));
      const raw: string[] = [];
      cursor.array(() => raw.push(cursor.raw()));
      cursor.end();
      expect(raw).toEqual([text, '1']);
    }
  });

  it.each([
    ['a number that is not JSON', '{"a":01}'],
    ['members without colon or comma', '{"a" "b" 1 2}'],
    ['an escape JSON has not', '{"a":"\\x"}'],
    ['a short \\u escape', '["\\u12"]'],
    ['misspelt literals', '[tru, nul, 1.]'],
    ['a raw tab in a string', '{"a":"x\ty"}'],
    ['a member name that is not a string', '{a:1}'],
    ['a trailing comma', '[1,]'],
    ['a comma where a value starts', '[,1]'],
  ])(
    'regression: raw() refuses %s inside a value (malformed golden records reached MatchResults as their JSON)',
    (_, text) => {
      expect(() => JSON.parse(text)).toThrow(SyntaxError);
      expect(() => new JsonCursor(Buffer.from(text)).raw()).toThrow(SyntaxError);
    },
  );

  it('raw() steps over a deeply nested value without running out of stack', () => {
    const text = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    expect(new JsonCursor(Buffer.from(text)).raw()).toBe(text);
  });
});
