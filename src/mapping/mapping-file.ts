// A mapping file turns another upstream JSON shape into a PartnerRecord, so the
// pipeline can read records it does not define. The file is validated once at start;
// each input record is then mapped and checked against the PartnerRecord schema.
//
//   { "version": 1, "fields": {
//       "partnerId": "$.id",
//       "sourceSystem": { "const": "CRM" },
//       "names": ["$.company.legalName", "$.company.tradeName"],
//       "changedAt": { "path": "$.updatedAt", "as": "timestamp" },
//       "addresses": { "each": "$.locations", "fields": { "street": "$.line1", "country": "$.countryCode" } } } }
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import type { PartnerDecoder } from '../serde/partner-decoders.ts';
import { jsonBody, jsonPartnerDecoder } from '../serde/partner-decoders.ts';
import { checkUtf8 } from '../serde/utf8.ts';
import { rfc3339Millis } from '../iso-time.ts';
import { MappingError } from './errors.ts';

const path = z.string().regex(/^\$(\.[A-Za-z_][\w-]*|\[\d+\])*$/, 'must be a path like $.a.b or $.list[0]');
const scalarRule = z.union([
  path,
  z.strictObject({ const: z.union([z.string(), z.number(), z.null()]) }),
  z.strictObject({ path, as: z.enum(['string', 'timestamp']) }),
]);
/**
 * A list rule; its `fields` are the PartnerRecord's own members of that list item, so a
 * misspelt one ("zip") is refused at start, not dropped from every record.
 */
const nestedRule = <Fields extends z.ZodRawShape>(fields: Fields) =>
  z.strictObject({ each: path, fields: z.strictObject(fields) });
const addressRule = nestedRule({
  street: scalarRule.optional(),
  houseNumber: scalarRule.optional(),
  postCode: scalarRule.optional(),
  town: scalarRule.optional(),
  region: scalarRule.optional(),
  country: scalarRule.optional(),
});
const identifierRule = nestedRule({ type: scalarRule, value: scalarRule, country: scalarRule.optional() });
const taxNumberRule = nestedRule({ type: scalarRule, value: scalarRule });

const mappingSchema = z.strictObject({
  version: z.literal(1),
  fields: z.strictObject({
    partnerId: scalarRule,
    sourceSystem: scalarRule,
    names: z.array(path).optional(),
    legalForm: scalarRule.optional(),
    changedAt: scalarRule,
    addresses: addressRule.optional(),
    identifiers: identifierRule.optional(),
    taxNumbers: taxNumberRule.optional(),
  }),
});

type ScalarRule = z.infer<typeof scalarRule>;
interface NestedRule {
  each: string;
  fields: Partial<Record<string, ScalarRule>>;
}
export type MappingRules = z.infer<typeof mappingSchema>;

/**
 * An integer of the input beyond 2^53, as written: `as: string` takes its digits, which the
 * number JSON.parse makes of it rounds (9007199254740993 and ...992 were one partner, one
 * looked up under the other's name). As JSON it is that number still.
 */
class ExactInteger {
  readonly digits: string;
  constructor(digits: string) {
    this.digits = digits;
  }
  toJSON(): number {
    return Number(this.digits);
  }
}

type Reviver = (key: string, value: unknown, context: { source?: string }) => unknown;
const keepExactIntegers: Reviver = (_key, value, context) =>
  typeof value === 'number' && !Number.isSafeInteger(value) && /^-?\d+$/.test(context.source ?? '')
    ? new ExactInteger(context.source as string)
    : value;

/** The input record; only text with 16 digits in a row can hold an integer beyond 2^53. */
function parseInput(text: string): unknown {
  return /\d{16}/.test(text)
    ? (JSON.parse as (text: string, reviver: Reviver) => unknown)(text, keepExactIntegers)
    : JSON.parse(text);
}

function read(value: unknown, at: string): unknown {
  let current = value;
  for (const step of at.slice(1).match(/\.[^.[]+|\[\d+\]/g) ?? []) {
    if (current === null || typeof current !== 'object') return undefined;
    const key = step.startsWith('[') ? Number(step.slice(1, -1)) : step.slice(1);
    current = (current as Record<string | number, unknown>)[key];
  }
  return current;
}

function scalar(value: unknown, rule: ScalarRule): unknown {
  if (typeof rule === 'string') return read(value, rule) ?? null;
  if ('const' in rule) return rule.const;
  const found = read(value, rule.path);
  if (found === undefined || found === null) return null;
  if (rule.as === 'string') {
    if (found instanceof ExactInteger) return found.digits;
    // String() of an object is "[object Object]" whatever it holds: every such record one partner.
    if (typeof found === 'object') {
      throw new MappingError(
        'MAPPING_RULE_FAILED',
        `${rule.path} is an object or a list, not a single value`,
        {
          details: { path: rule.path },
        },
      );
    }
    return String(found);
  }
  const millis =
    typeof found === 'string' ? rfc3339Millis(found) : Number.isSafeInteger(found) ? found : undefined;
  if (millis === undefined) {
    // Enough to recognise the shape; the whole record is in the dead letter.
    const value = (found instanceof ExactInteger ? found.digits : JSON.stringify(found)).slice(0, 100);
    throw new MappingError(
      'MAPPING_RULE_FAILED',
      `${rule.path} is ${value}, not a timestamp: an RFC 3339 date-time with its offset ` +
        `(2030-01-31T02:00:00Z), a date (2030-01-31) or epoch milliseconds as a whole number`,
      { details: { path: rule.path, value } },
    );
  }
  return millis;
}

function nested(value: unknown, rule: NestedRule | undefined): Record<string, unknown>[] {
  if (!rule) return [];
  const items = read(value, rule.each);
  if (items === undefined || items === null) return [];
  if (!Array.isArray(items)) {
    throw new MappingError('MAPPING_RULE_FAILED', `${rule.each} is not a list`, {
      details: { path: rule.each },
    });
  }
  return items.map((item) =>
    Object.fromEntries(
      Object.entries(rule.fields).flatMap(([k, r]) => (r === undefined ? [] : [[k, scalar(item, r)]])),
    ),
  );
}

export function applyMapping(rules: MappingRules, value: unknown): Record<string, unknown> {
  const { fields } = rules;
  return {
    partnerId: scalar(value, fields.partnerId),
    sourceSystem: scalar(value, fields.sourceSystem),
    names: (fields.names ?? []).map((p) => read(value, p)).filter((n) => n !== undefined && n !== null),
    legalForm: fields.legalForm ? scalar(value, fields.legalForm) : null,
    addresses: nested(value, fields.addresses),
    identifiers: nested(value, fields.identifiers),
    taxNumbers: nested(value, fields.taxNumbers),
    changedAt: scalar(value, fields.changedAt),
  };
}

export function parseMappingRules(text: string, source: string): MappingRules {
  let json: unknown;
  try {
    // Saved with a byte order mark (Notepad's UTF-8), it was "not JSON" over a mark nobody sees.
    json = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new MappingError('MAPPING_FILE_INVALID', `${source}: not JSON (${(error as Error).message})`);
  }
  const parsed = mappingSchema.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (issue) =>
        `${issue.path.join('.') || '(root)'}: ${
          // zod's word for a missing member of a union ("Invalid input") says nothing.
          issue.input === undefined ? 'missing' : issue.message
        }`,
    );
    throw new MappingError('MAPPING_FILE_INVALID', `${source}: ${problems.join('; ')}`, {
      details: { problems },
    });
  }
  return parsed.data;
}

/** Reads and validates a mapping file; its decoder maps each JSON input record, then checks it. */
export async function loadMappingFile(
  file: string,
): Promise<{ rules: MappingRules; decoder: PartnerDecoder }> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new MappingError(
      'MAPPING_FILE_INVALID',
      `cannot read mapping file ${file}: ${(error as Error).message}`,
    );
  }
  const rules = parseMappingRules(text, file);
  const checked = jsonPartnerDecoder();
  return {
    rules,
    decoder: {
      async decode(bytes) {
        const value = jsonBody(bytes);
        checkUtf8(value);
        let input: unknown;
        try {
          input = parseInput(value.toString('utf8'));
        } catch (error) {
          throw new MappingError('MAPPING_RULE_FAILED', `input is not JSON: ${(error as Error).message}`);
        }
        let mapped: string;
        try {
          mapped = JSON.stringify(applyMapping(rules, input));
        } catch (error) {
          // A value nested some thousands deep where a rule reads (JSON.parse takes any depth):
          // the stack overflow failed the pipeline at this record, at every restart.
          if (!(error instanceof RangeError)) throw error;
          throw new MappingError(
            'MAPPING_RULE_FAILED',
            `a value the mapping reads is nested too deep to be taken (${error.message})`,
          );
        }
        return checked.decode(Buffer.from(mapped));
      },
    },
  };
}
