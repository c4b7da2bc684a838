// Loading the configuration for a command: the global --config flag plus the
// command's own overrides, validated once.
import type { Command } from 'commander';
import { loadConfig, type Config, type ConfigInput } from '../config/index.ts';

/** `kafkaOnly`: the command does not call the reference data service, so needs none of its credentials. */
export function commandConfig(command: Command, overrides: ConfigInput = {}, kafkaOnly = false): Config {
  const { config: file } = command.optsWithGlobals<{ config?: string }>();
  return Object.freeze(
    loadConfig({ ...(file ? { file } : {}), overrides, ...(kafkaOnly ? { serviceCredentials: false } : {}) }),
  );
}
