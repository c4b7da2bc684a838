import { z } from 'zod';
import { SandboxMatchingError } from './errors.ts';
import { LOOKUP_FEATURES } from './features.ts';

// Lookup parameters with the spec's limits and defaults (v4 lookup, item 11). Compiled once;
// every lookup validates its options here, so a sandbox caller sees the same 400-worthy
// mistakes the real service would reject.
const lookupOptionsSchema = z.strictObject({
  limit: z.int().min(0).max(1000).default(10),
  startAfter: z.string().optional(),
  dataSources: z.array(z.string()).default([]),
  matchingThreshold: z.number().min(0).max(1).default(0.5),
  maxCandidates: z.int().min(20).max(200).default(50),
  /** An empty list includes all data mirrors; an entry with no dataSources all of that mirror's. */
  storagesDataSources: z
    .array(z.strictObject({ storageId: z.string(), dataSources: z.array(z.string()).default([]) }))
    .default([]),
  featuresOn: z.array(z.enum(LOOKUP_FEATURES)).default([]),
  featuresOff: z.array(z.enum(LOOKUP_FEATURES)).default([]),
});

export type LookupOptionsInput = z.input<typeof lookupOptionsSchema>;
export type LookupOptions = z.output<typeof lookupOptionsSchema>;

export function parseLookupOptions(input: LookupOptionsInput = {}): LookupOptions {
  const result = lookupOptionsSchema.safeParse(input);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message }));
  throw new SandboxMatchingError(
    'SANDBOX_INVALID_LOOKUP_OPTIONS',
    `invalid lookup options: ${issues.map((issue) => `${issue.path || '(root)'} ${issue.message}`).join('; ')}`,
    { details: { issues } },
  );
}
