// Loading the configuration for a command: the global --config flag plus the
// command's own overrides, validated once.
import type { Command } from 'commander';
import { configSecrets, loadConfig, type Config, type ConfigInput } from '../config/index.ts';
import { processSecrets } from '../observability/secret-redactor.ts';

/** `kafkaOnly`: the command does not call the reference data service, so needs none of its credentials. */
export function commandConfig(command: Command, overrides: ConfigInput = {}, kafkaOnly = false): Config {
  const { config: file } = command.optsWithGlobals<{ config?: string }>();
  const config = Object.freeze(
    loadConfig({ ...(file ? { file } : {}), overrides, ...(kafkaOnly ? { serviceCredentials: false } : {}) }),
  );
  // From here on, no log line, health answer or failure line of this process shows them.
  for (const secret of configSecrets(config)) processSecrets.add(secret);
  return config;
}
