// The pipeline's Avro schemas, loaded from schemas/*.avsc. Files may name types that
// other files define (MatchResult uses MatchCandidate), so they are parsed in
// dependency order into one avsc registry; what is registered in the schema registry
// is each type's self-contained form, with the named types it uses inlined.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import avro from 'avsc';

export const schemasDir = fileURLToPath(new URL('../../schemas/', import.meta.url));

/** Dependency order: a file comes after every file whose types it names. */
const SCHEMA_FILES = [
  'MatchOutcome',
  'MatchCandidate',
  'PartnerRecord',
  'MatchResult',
  'BusinessPartnerEvent',
  'StorageRecord',
] as const;

export type SchemaName = (typeof SCHEMA_FILES)[number];

export interface LoadedSchema {
  name: SchemaName;
  type: avro.Type;
  /** Self-contained schema text, as registered in the schema registry. */
  text: string;
}

let loaded: Map<SchemaName, LoadedSchema> | undefined;

export function pipelineSchemas(): Map<SchemaName, LoadedSchema> {
  if (loaded) return loaded;
  const registry: Record<string, avro.Type> = {};
  loaded = new Map();
  for (const name of SCHEMA_FILES) {
    const json: unknown = JSON.parse(readFileSync(join(schemasDir, `${name}.avsc`), 'utf8'));
    const type = avro.Type.forSchema(json as avro.Schema, { registry, logicalTypes: {} });
    loaded.set(name, { name, type, text: JSON.stringify(type.schema({ exportAttrs: true })) });
  }
  return loaded;
}

export function pipelineSchema(name: SchemaName): LoadedSchema {
  const schema = pipelineSchemas().get(name);
  if (!schema) throw new Error(`unknown schema ${name}`);
  return schema;
}
