// Loading the configuration for a command: the global --config flag plus the
// command's own overrides, validated once.
import type { Command } from 'commander';
import { configSecrets, loadConfig, type Config, type ConfigInput } from '../config/index.ts';
import { processSecrets } from '../observability/secret-redactor.ts';

/**
 * `withoutServiceCredentials`: the command does not call the reference data service's lookup
 * API, so needs neither its API key nor its OAuth client (Kafka's commands; `storage
 * initialize`, whose data exchange API has a credential of its own).
 */
export function commandConfig(
  command: Command,
  overrides: ConfigInput = {},
  withoutServiceCredentials = false,
): Config {
  const { config: file } = command.optsWithGlobals<{ config?: string }>();
  const config = Object.freeze(
    loadConfig({
      ...(file ? { file } : {}),
      overrides,
      ...(withoutServiceCredentials ? { serviceCredentials: false } : {}),
    }),
  );
  // From here on, no log line, health answer or failure line of this process shows them.
  for (const secret of configSecrets(config)) processSecrets.add(secret);
  return config;
}
