// Loading the configuration for a command: the global --config flag plus the
// command's own overrides, validated once.
import type { Command } from 'commander';
import { loadConfig, type Config, type ConfigInput } from '../config/index.ts';

export function commandConfig(command: Command, overrides: ConfigInput = {}): Config {
  const { config: file } = command.optsWithGlobals<{ config?: string }>();
  return Object.freeze(loadConfig({ ...(file ? { file } : {}), overrides }));
}
