// Builds the image from the repository's Dockerfile with podman, on the local base image
// (local-base.ts) where no registry can be reached. Docker-format image: the OCI format has no
// HEALTHCHECK. The labels get the package version, the commit and the build time.
// The image the tag named before the build is removed after it (see removeReplaced).
//
//   node deploy/container/build-image.ts [tag]    (npm run image:local; tag: partner-enrich:local)
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ensureLocalBase } from './local-base.ts';
import { log, podman, podmanResult } from './podman.ts';

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

/** The ID of the image `image` names, or undefined when it names none. */
async function imageId(image: string): Promise<string | undefined> {
  const exists = await podmanResult(['image', 'exists', image]);
  if (exists.code === 1) return undefined;
  if (exists.code !== 0)
    throw new Error(`podman image exists ${image} exited with ${exists.code}:\n${exists.stderr}`);
  return (await podman(['image', 'inspect', '--format', '{{.Id}}', image])).trim();
}

/** What `podman rmi` answers for an image a container uses, external (a build's) or not. */
const IN_USE = /image is in use by a container/;

/**
 * Removes `previous`, the image `image` named before this build (the build moved the tag), with
 * its untagged parents that nothing else uses: `podman rmi` removes dangling parents, and those
 * the new image was built on from cache are not dangling. Nothing else: no `podman image prune`,
 * which removes every dangling image on the machine, other projects' too, and fails while a
 * container uses one of them, as the working container an interrupted build leaves does.
 * Housekeeping does not fail a build: while a container uses `previous` (external or not), it is
 * kept with a warning; kept too, with a note, when another tag still names it. Any other error
 * throws.
 */
async function removeReplaced(previous: string, image: string): Promise<void> {
  const short = previous.slice(0, 12);
  const tags = JSON.parse(await podman(['image', 'inspect', '--format', '{{json .RepoTags}}', previous])) as
    string[] | null;
  if (tags && tags.length > 0) {
    log(`kept ${short}, the previous ${image}: still tagged ${tags.join(', ')}`);
    return;
  }
  const removed = await podmanResult(['rmi', previous]);
  if (removed.code === 0) return;
  if (IN_USE.test(removed.stderr)) {
    log(
      `warning: the previous ${image} (${short}) is left in place: ${removed.stderr.trim()} ` +
        `(podman ps --all --external lists the containers; podman rmi ${short} once they are gone)`,
    );
    return;
  }
  throw new Error(`podman rmi ${previous} exited with ${removed.code}:\n${removed.stderr || removed.stdout}`);
}

export async function buildImage(image: string): Promise<BuiltImage> {
  const baseStarted = Date.now();
  const baseImage = await ensureLocalBase();
  const previous = await imageId(image);
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
  if (previous && previous !== (await imageId(image))) await removeReplaced(previous, image);
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
