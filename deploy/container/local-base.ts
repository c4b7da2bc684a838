// A local stand-in for the official Node 24 slim image, for machines that can pull no image
// (this repository's CI): Debian bookworm from `debootstrap --variant=minbase`, the Node 24
// binary of the project's `node` dev dependency and the npm that runs this script, laid out
// as the official image lays them out (/usr/local/bin/node, /usr/local/lib/node_modules/npm,
// user `node` with uid 1000). The Dockerfile takes it as its BASE_IMAGE.
// It also trusts what this machine trusts: its CA bundle, through NODE_EXTRA_CA_CERTS, since
// the machine's egress re-signs TLS (npm ci in the build fails without it).
//
// Cached twice: the image in podman's storage (a second run only checks it exists) and the
// root filesystem as a tarball under the cache folder (after `podman rmi -a`, only an import).
// Its tag carries a hash of this file and of the two versions, so a changed recipe rebuilds.
//
//   node deploy/container/local-base.ts    prints the image name
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, realpathSync } from 'node:fs';
import { chmod, copyFile, cp, mkdir, rename, rm, symlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { containerCacheDir, ensurePackages, log, podman, podmanResult } from './podman.ts';

const exec = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const BASE_REPOSITORY = 'localhost/partner-enrich-base';
const SUITE = 'bookworm';
const DEFAULT_MIRROR = 'http://deb.debian.org/debian';
const PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';
/** Left out of the root filesystem: nothing in the image reads them. */
const TRIMMED = [
  'var/cache/apt/archives',
  'var/lib/apt/lists',
  'usr/share/doc',
  'usr/share/man',
  'usr/share/info',
];

/** The Node 24 binary of the `node` dev dependency. */
export const projectNodeBinary = (): string => join(repoRoot, 'node_modules', 'node', 'bin', 'node');

/** The npm package that runs this script (npm sets npm_execpath), else the one on the PATH. */
async function npmPackageDir(): Promise<string> {
  const cli = process.env.npm_execpath ?? (await exec('sh', ['-c', 'command -v npm'])).stdout.trim();
  const dir = dirname(dirname(realpathSync(cli)));
  const { name } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string };
  if (name !== 'npm') throw new Error(`no npm package at ${dir} (from ${cli})`);
  return dir;
}

/** The first Debian mirror of the machine's apt sources that serves the suite, one-line or deb822. */
export function debianMirror(sources = readAptSources()): string {
  for (const text of sources) {
    for (const line of text.split('\n')) {
      const oneLine = /^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)/.exec(line.trim());
      if (oneLine?.[2] === SUITE && oneLine[1]) return oneLine[1];
    }
    for (const stanza of text.split(/\n\s*\n/)) {
      const field = (name: string) => new RegExp(`^${name}:\\s*(.+)$`, 'mi').exec(stanza)?.[1]?.trim();
      const types = field('Types')?.split(/\s+/) ?? [];
      const suites = field('Suites')?.split(/\s+/) ?? [];
      const uri = field('URIs')?.split(/\s+/)[0];
      if (types.includes('deb') && suites.includes(SUITE) && uri) return uri;
    }
  }
  return DEFAULT_MIRROR;
}

function readAptSources(): string[] {
  const files = ['/etc/apt/sources.list'];
  const dir = '/etc/apt/sources.list.d';
  if (existsSync(dir)) {
    for (const name of readdirSync(dir).sort())
      if (name.endsWith('.list') || name.endsWith('.sources')) files.push(join(dir, name));
  }
  return files.filter((file) => existsSync(file)).map((file) => readFileSync(file, 'utf8'));
}

async function timed<T>(what: string, step: () => Promise<T>): Promise<T> {
  const started = Date.now();
  const result = await step();
  log(`${what}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return result;
}

async function buildRootfs(rootfs: string, npmDir: string): Promise<void> {
  await rm(rootfs, { recursive: true, force: true });
  const mirror = debianMirror();
  await timed(`debootstrap --variant=minbase ${SUITE} (${mirror})`, () =>
    exec('debootstrap', ['--variant=minbase', SUITE, rootfs, mirror], { maxBuffer: 64 * 1024 * 1024 }),
  );
  for (const path of TRIMMED) {
    await rm(join(rootfs, path), { recursive: true, force: true });
    await mkdir(join(rootfs, path), { recursive: true });
  }
  const bin = join(rootfs, 'usr/local/bin');
  await copyFile(projectNodeBinary(), join(bin, 'node'));
  await chmod(join(bin, 'node'), 0o755);
  await cp(npmDir, join(rootfs, 'usr/local/lib/node_modules/npm'), { recursive: true });
  await symlink('../lib/node_modules/npm/bin/npm-cli.js', join(bin, 'npm'));
  await symlink('../lib/node_modules/npm/bin/npx-cli.js', join(bin, 'npx'));
  if (existsSync(CA_BUNDLE)) {
    await mkdir(dirname(join(rootfs, CA_BUNDLE)), { recursive: true });
    await copyFile(CA_BUNDLE, join(rootfs, CA_BUNDLE));
  }
  await exec('useradd', [
    '--root',
    rootfs,
    '--uid',
    '1000',
    '--user-group',
    '--create-home',
    '--shell',
    '/bin/bash',
    'node',
  ]);
}

/** The local base image's name, built (or imported from the cached tarball) when missing. */
export async function ensureLocalBase(): Promise<string> {
  await ensurePackages();
  const node = projectNodeBinary();
  const nodeVersion = (await exec(node, ['--version'])).stdout.trim();
  if (!nodeVersion.startsWith('v24.')) throw new Error(`${node} is ${nodeVersion}, not Node 24: run npm ci`);
  const npmDir = await npmPackageDir();
  const npmVersion = (JSON.parse(readFileSync(join(npmDir, 'package.json'), 'utf8')) as { version: string })
    .version;
  const recipe = createHash('sha256')
    .update(readFileSync(fileURLToPath(import.meta.url)))
    .update(`${nodeVersion} ${npmVersion}`)
    .update(existsSync(CA_BUNDLE) ? readFileSync(CA_BUNDLE) : '')
    .digest('hex')
    .slice(0, 12);
  const image = `${BASE_REPOSITORY}:node${nodeVersion.slice(1)}-${SUITE}-${recipe}`;
  if ((await podmanResult(['image', 'exists', image])).code === 0) return image;

  const dir = containerCacheDir();
  const tarball = join(dir, `base-${recipe}.tar`);
  if (!existsSync(tarball)) {
    await mkdir(dir, { recursive: true });
    for (const name of readdirSync(dir)) if (/^base-.*\.tar/.test(name)) await rm(join(dir, name));
    const rootfs = join(dir, 'rootfs');
    await buildRootfs(rootfs, npmDir);
    await timed('root filesystem tarball', async () => {
      await exec('tar', ['--numeric-owner', '-C', rootfs, '-cf', `${tarball}.partial`, '.']);
      await rename(`${tarball}.partial`, tarball);
    });
    await rm(rootfs, { recursive: true, force: true });
  }
  // Earlier recipes' bases: untagged; `podman rmi` of the last image built on one takes it along
  // once nothing else is built on it (the build's cached first stages are, so they stay).
  const tags = await podman(['images', '--format', '{{.Repository}}:{{.Tag}}', BASE_REPOSITORY]);
  for (const tag of tags.split('\n').filter((name) => name.startsWith(`${BASE_REPOSITORY}:`)))
    await podman(['untag', tag]);
  await timed(`podman import ${image}`, () =>
    podman([
      'import',
      ...['--change', `ENV PATH=${PATH}`],
      ...(existsSync(CA_BUNDLE) ? ['--change', `ENV NODE_EXTRA_CA_CERTS=${CA_BUNDLE}`] : []),
      ...['--change', 'CMD ["node"]'],
      tarball,
      image,
    ]),
  );
  return image;
}

if (import.meta.main) {
  console.log(await ensureLocalBase());
}
