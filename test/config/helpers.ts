import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect } from 'vitest';
import { ConfigError, type ConfigErrorCode } from '../../src/config/index.ts';

/** The one option without a usable default (auth is apiKey by default). */
export const API_KEY_ENV = { PARTNER_ENRICH_REFDATA__API_KEY: 'test-api-key' } as const;

/** Runs `load`, expects a ConfigError with `code` and returns it for further assertions. */
export function configErrorOf(load: () => unknown, code: ConfigErrorCode): ConfigError {
  let thrown: unknown;
  try {
    load();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(ConfigError);
  const error = thrown as ConfigError;
  expect(error.code).toBe(code);
  expect(error.canRetry).toBe(false);
  return error;
}

/** Paths of the problems a CONFIG_INVALID error lists. */
export const problemPaths = (error: ConfigError): string[] =>
  (error.details['problems'] as { path: string }[]).map((problem) => problem.path);

const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

/** Writes a file in a fresh temporary directory, removed after the test. */
export function tempFile(name: string, content: string): string {
  const directory = mkdtempSync(join(tmpdir(), 'partner-enrich-config-'));
  directories.push(directory);
  const file = join(directory, name);
  writeFileSync(file, content);
  return file;
}
