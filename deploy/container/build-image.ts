// Builds the image from the repository's Dockerfile with podman, on the local base image
// (local-base.ts) where no registry can be reached. Docker-format image: the OCI format has no
// HEALTHCHECK. The labels get the package version, the commit and the build time.
//
//   node deploy/container/build-image.ts [tag]    (npm run image:local; tag: partner-enrich:local)
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ensureLocalBase } from './local-base.ts';
import { log, podman } from './podman.ts';

const exec = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

export const packageVersion = (): string =>
  (JSON.parse(readFileSync(`${repoRoot}/package.json`, 'utf8')) as { version: string }).version;

async function revision(): Promise<string> {
  try {
    return (await exec('git', ['rev-parse', 'HEAD'], { cwd: repoRoot })).stdout.trim();
  } catch {
    return 'unknown';
  }
}

export interface BuiltImage {
  image: string;
  baseImage: string;
  /** Uncompressed size of all its layers. */
  bytes: number;
  buildSeconds: number;
  baseSeconds: number;
}

export async function buildImage(image: string): Promise<BuiltImage> {
  const baseStarted = Date.now();
  const baseImage = await ensureLocalBase();
  const buildStarted = Date.now();
  await podman([
    'build',
    '--format',
    'docker',
    ...['--build-arg', `BASE_IMAGE=${baseImage}`],
    // Labels, not the Dockerfile's VERSION/REVISION/CREATED arguments: buildah reuses a cached
    // LABEL step whose arguments changed (containers/buildah#5501), keeping the old values.
    ...['--label', `org.opencontainers.image.version=${packageVersion()}`],
    ...['--label', `org.opencontainers.image.revision=${await revision()}`],
    ...['--label', `org.opencontainers.image.created=${new Date().toISOString()}`],
    ...['--tag', image],
    repoRoot,
  ]);
  const built = Date.now();
  // The previous build of the tag, now untagged; the layers of this one stay as the next build's cache.
  await podman(['image', 'prune', '--force']);
  const bytes = Number((await podman(['image', 'inspect', '--format', '{{.Size}}', image])).trim());
  return {
    image,
    baseImage,
    bytes,
    baseSeconds: (buildStarted - baseStarted) / 1000,
    buildSeconds: (built - buildStarted) / 1000,
  };
}

if (import.meta.main) {
  const built = await buildImage(process.argv[2] ?? 'localhost/partner-enrich:local');
  log(`base ${built.baseImage} ready in ${built.baseSeconds.toFixed(1)} s`);
  log(`built in ${built.buildSeconds.toFixed(1)} s, ${(built.bytes / 1e6).toFixed(0)} MB`);
  console.log(built.image);
}
