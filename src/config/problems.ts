// Turns zod's issues into one line per invalid option, each naming the option's path and
// the source that set it. Values are never quoted: the option may be a credential.
import type { z } from 'zod';

export interface ConfigProblem {
  /** e.g. `kafka.brokers[1]`, `batching.maxTasks` */
  path: string;
  message: string;
  /** Which source set the value, when one did: a file, an environment variable, the overrides. */
  source?: string;
}

type IssuePath = readonly PropertyKey[];

export function formatPath(path: IssuePath): string {
  return path
    .map((key, index) =>
      typeof key === 'number' ? `[${key}]` : index === 0 ? String(key) : `.${String(key)}`,
    )
    .join('');
}

/**
 * A union issue (kafka.ssl: boolean or object) nests one issue list per member. The member
 * whose type the value has is the one the user meant; its own issues are the useful ones.
 */
function unionIssues(issue: z.core.$ZodIssueInvalidUnion, path: IssuePath): [IssuePath, string][] {
  const wrongType = (issues: z.core.$ZodIssue[]) =>
    issues.some((inner) => inner.code === 'invalid_type' && inner.path.length === 0);
  const meant = issue.errors.filter((issues) => !wrongType(issues));
  const [only] = meant;
  if (meant.length === 1 && only) return flatten(only, path);
  const expected = issue.errors.flatMap((issues) =>
    issues.flatMap((inner) =>
      inner.code === 'invalid_type' && inner.path.length === 0 ? [inner.expected] : [],
    ),
  );
  return [[path, expected.length > 0 ? `Invalid input: expected ${expected.join(' or ')}` : issue.message]];
}

function flatten(issues: readonly z.core.$ZodIssue[], base: IssuePath): [IssuePath, string][] {
  return issues.flatMap((issue): [IssuePath, string][] => {
    const path = [...base, ...issue.path];
    if (issue.code === 'unrecognized_keys')
      return issue.keys.map((key) => [[...path, key], 'unknown option']);
    if (issue.code === 'invalid_union') return unionIssues(issue, path);
    return [[path, issue.message]];
  });
}

export function configProblems(
  issues: readonly z.core.$ZodIssue[],
  sourceOf: (path: IssuePath) => string | undefined,
): ConfigProblem[] {
  return flatten(issues, []).map(([path, message]) => {
    const source = sourceOf(path);
    return { path: formatPath(path) || '(root)', message, ...(source === undefined ? {} : { source }) };
  });
}

export function describeProblems(problems: readonly ConfigProblem[]): string {
  return problems
    .map(
      ({ path, message, source }) =>
        `  - ${path}: ${message}${source === undefined ? '' : ` (from ${source})`}`,
    )
    .join('\n');
}
