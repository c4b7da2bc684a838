// Podman on a machine without a Docker engine, as this repository's CI machines are: the
// Debian packages (podman, runc) and a containers.conf that fits the machine. The VM refuses
// setrlimit, so containers get no default ulimits; there is no systemd, so cgroups are
// managed directly and events and logs go to files.
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { cacheRoot } from '../local/artifacts.ts';

const exec = promisify(execFile);

export const CONTAINERS_CONF = `# Written by deploy/container/podman.ts; podman reads it through $CONTAINERS_CONF.
[containers]
# The VM refuses setrlimit: runc fails to start a container that sets any limit.
default_ulimits = []
# No journald without systemd.
log_driver = "k8s-file"

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
`;

/** Debian packages the container scripts run, by the command each provides. */
const PACKAGES: Record<string, string> = { podman: 'podman', runc: 'runc', debootstrap: 'debootstrap' };

export const containerCacheDir = (): string => join(cacheRoot(), 'container');

async function commandExists(command: string): Promise<boolean> {
  try {
    await exec('sh', ['-c', `command -v ${command}`]);
    return true;
  } catch {
    return false;
  }
}

/** Installs the missing packages with apt-get (root only); the package lists are refreshed once if the install fails. */
export async function ensurePackages(commands: string[] = Object.keys(PACKAGES)): Promise<void> {
  const missing: string[] = [];
  for (const command of commands)
    if (!(await commandExists(command))) missing.push(PACKAGES[command] ?? command);
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0)
    throw new Error(`missing ${missing.join(', ')}: install them (apt-get) as root`);
  log(`installing ${missing.join(', ')} with apt-get`);
  const install = ['install', '-y', '--no-install-recommends', ...missing];
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    await exec('apt-get', install, { env, maxBuffer: 64 * 1024 * 1024 });
  } catch {
    await exec('apt-get', ['update'], { env, maxBuffer: 64 * 1024 * 1024 });
    await exec('apt-get', install, { env, maxBuffer: 64 * 1024 * 1024 });
  }
}

let confFile: string | undefined;

/** The environment every podman call runs with: the containers.conf above. */
export function podmanEnv(): NodeJS.ProcessEnv {
  if (!confFile) {
    mkdirSync(containerCacheDir(), { recursive: true });
    confFile = join(containerCacheDir(), 'containers.conf');
    writeFileSync(confFile, CONTAINERS_CONF);
  }
  return { ...process.env, CONTAINERS_CONF: confFile };
}

export interface PodmanResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `podman <args>` to its end; a non-zero exit is an error naming the command and its stderr. */
export async function podman(args: string[], options: { input?: string } = {}): Promise<string> {
  const result = await podmanResult(args, options);
  if (result.code !== 0) {
    throw new Error(
      `podman ${args.join(' ')} exited with ${result.code}:\n${result.stderr || result.stdout}`,
    );
  }
  return result.stdout;
}

/** Runs `podman <args>` to its end and returns its exit code and output, whatever the code. */
export function podmanResult(args: string[], options: { input?: string } = {}): Promise<PodmanResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('podman', args, { env: podmanEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

export function log(message: string): void {
  console.error(`[container] ${message}`);
}
