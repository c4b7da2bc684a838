import type { Command } from 'commander';
import { configOrigins, describeConfig, type Config } from '../../config/index.ts';
import { usageQuotaCheck } from '../../quota/usage-quota-check.ts';
import { createRefDataClient } from '../enrichment.ts';
import { commandConfig } from '../options.ts';

export function registerConfigCheck(program: Command): void {
  const config =
    program.commands.find((c) => c.name() === 'config') ??
    program.command('config').description('configuration');
  config
    .command('check')
    .description(
      'validate the configuration (file, environment, defaults) and print it with secrets redacted; ' +
        'with --quota, also read the quota window from the service and warn when a bulk can never fit in it. ' +
        'Exits 0 for a valid configuration, 2 (CONFIG_INVALID, CONFIG_FILE_UNREADABLE...) otherwise; ' +
        'the quota line is advice: a window that cannot be read or is too small for a bulk is said, not an exit code',
    )
    .option(
      '--quota',
      'read the quota window from the service usage API (a warning on stderr, exit code unchanged)',
    )
    .option(
      '--origins',
      'after the configuration, list each option a source set and the source whose value is in force (file, environment variable, flag); the others have their defaults',
    )
    .action(async (options: { quota?: boolean; origins?: boolean }, command: Command) => {
      const checked = commandConfig(command);
      console.log(describeConfig(checked));
      if (options.origins) console.log(originsReport(command));
      if (options.quota) console.error(await quotaWindowReport(checked));
    });
}

function originsReport(command: Command): string {
  const { config: file } = command.optsWithGlobals<{ config?: string }>();
  const origins = configOrigins(file ? { file } : {});
  if (origins.length === 0) return 'set by no source: every option has its default';
  const width = Math.max(...origins.map(({ path }) => path.length));
  const lines = origins.map(({ path, source }) => `  ${path.padEnd(width)}  ${source}`);
  return ['set by a source (every other option has its default):', ...lines].join('\n');
}

/** One line on the quota window against `batching.maxTasks`; never fails the check. */
async function quotaWindowReport(config: Config): Promise<string> {
  let room;
  try {
    const client = createRefDataClient(config.refdata, { ...config.retry, maxAttempts: 1 });
    room = await usageQuotaCheck(client, {
      serviceTechnicalKey: config.quota.serviceTechnicalKey,
      organizationId: config.refdata.organizationId,
      ...(config.refdata.workspaceId ? { workspaceId: config.refdata.workspaceId } : {}),
      preferredUsername: config.refdata.credentialUsername,
    }).room();
  } catch (error) {
    return `quota window: unknown, the usage API did not answer (${(error as Error).message})`;
  }
  if (!room) return 'quota window: unknown, the usage API does not report its size';
  const { maxTasks } = config.batching;
  return maxTasks > room.max
    ? `warning: batching.maxTasks ${maxTasks} can never fit in the quota window of ${room.max} tasks; bulks are cut to ${room.max}`
    : `quota window: ${room.max} tasks, ${room.left} left now; bulks of up to ${maxTasks} tasks fit`;
}
