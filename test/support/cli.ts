// Runs the `partner-enrich` command as a separate process, the way an operator does.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Starts the command; the caller owns the process. */
export function startCli(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn('node_modules/.bin/node', ['src/cli/main.ts', ...args], {
    env: { PATH: process.env.PATH, ...env },
  });
}

/** Runs the command to its end and returns what it printed. */
export async function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  const child = startCli(args, env);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk) => (stdout += chunk));
  child.stderr?.on('data', (chunk) => (stderr += chunk));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}
