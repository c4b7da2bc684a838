// Options that were renamed. An old name is rejected rather than silently ignored or
// quietly mapped: a deployment should learn that its configuration is out of date, and
// the hint tells it exactly what to write instead. Add an entry whenever an option moves.
import { envVarFor } from './options.ts';
import { hasPath } from './plain-objects.ts';

export const RENAMED_OPTIONS: Readonly<Record<string, string>> = Object.freeze({
  'batching.maxBatchSize': 'batching.maxTasks',
  'refdata.url': 'refdata.baseUrl',
});

export interface RenamedOption {
  from: string;
  to: string;
}

/** Old environment variable names, so that they are recognised and answered with the new one. */
export const renamedEnvVars: ReadonlyMap<string, string> = new Map(
  Object.keys(RENAMED_OPTIONS).map((from) => [envVarFor(from), from]),
);

export function findRenamedOptions(input: unknown): RenamedOption[] {
  return Object.entries(RENAMED_OPTIONS)
    .filter(([from]) => hasPath(input, from.split('.')))
    .map(([from, to]) => ({ from, to }));
}
