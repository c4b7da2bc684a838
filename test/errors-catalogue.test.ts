// docs/ERRORS.md lists every error code the product has, and nothing else.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BULK_ERROR_CODES } from '../src/bulk/errors.ts';
import { CONFIG_ERROR_CODES } from '../src/config/index.ts';
import { FILES_ERROR_CODES } from '../src/files/errors.ts';
import { KAFKA_ERROR_CODES, SINK_ERROR_CODES } from '../src/kafka/errors.ts';
import { MAPPING_ERROR_CODES } from '../src/mapping/errors.ts';
import { OBSERVABILITY_ERROR_CODES } from '../src/observability/errors.ts';
import { PIPELINE_ERROR_CODES } from '../src/pipeline/errors.ts';
import { QUOTA_ERROR_CODES } from '../src/quota/errors.ts';
import { REFDATA_ERROR_CODES } from '../src/refdata/index.ts';
import { RERUN_ERROR_CODES } from '../src/rerun/errors.ts';
import { SANDBOX_DATASET_ERROR_CODES } from '../src/sandbox/dataset/errors.ts';
import { SANDBOX_ERROR_CODES, SANDBOX_HTTP_ERROR_CODES } from '../src/sandbox/index.ts';
import { SANDBOX_MATCHING_ERROR_CODES } from '../src/sandbox/matching/errors.ts';
import { SERDE_ERROR_CODES } from '../src/serde/errors.ts';
import { STATE_ERROR_CODES } from '../src/state/errors.ts';

const CODES = [
  ...CONFIG_ERROR_CODES,
  ...SERDE_ERROR_CODES,
  ...FILES_ERROR_CODES,
  ...MAPPING_ERROR_CODES,
  ...BULK_ERROR_CODES,
  ...SINK_ERROR_CODES,
  ...KAFKA_ERROR_CODES,
  ...PIPELINE_ERROR_CODES,
  ...STATE_ERROR_CODES,
  ...QUOTA_ERROR_CODES,
  ...OBSERVABILITY_ERROR_CODES,
  ...RERUN_ERROR_CODES,
  ...REFDATA_ERROR_CODES,
  ...SANDBOX_ERROR_CODES,
  ...SANDBOX_HTTP_ERROR_CODES,
  ...SANDBOX_DATASET_ERROR_CODES,
  ...SANDBOX_MATCHING_ERROR_CODES,
];

const documented = [...readFileSync('docs/ERRORS.md', 'utf8').matchAll(/^\| `([A-Z0-9_]+)`\s*\|/gm)].map(
  (m) => m[1],
);

describe('the error catalogue (docs/ERRORS.md)', () => {
  it('documents every code of the source', () => {
    expect(CODES.filter((code) => !documented.includes(code))).toEqual([]);
  });

  it('documents no code that does not exist', () => {
    expect(documented.filter((code) => !(CODES as readonly string[]).includes(code as string))).toEqual([]);
  });

  it('keeps codes unique across components', () => {
    expect(new Set(CODES).size).toBe(CODES.length);
  });
});
