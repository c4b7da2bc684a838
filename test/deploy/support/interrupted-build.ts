// What a `podman build` killed mid-way leaves: buildah's working container, an "external"
// container (`podman ps --external`; `podman ps` does not list it) on the image its step started
// from. Made for real: a build whose RUN step waits is killed with SIGKILL, with its whole process
// group, once the step runs. The RUN's own process outlives podman (runc starts it in a session of
// its own), so it waits on a file in a mounted folder, and `stop()` ends it.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { podman, podmanEnv } from '../../../deploy/container/podman.ts';

export interface ListedContainer {
  Id: string;
  ImageID: string;
  Names: string[];
  State: string;
}

/** Every container, podman's and external ones (buildah's working containers). */
export async function allContainers(): Promise<ListedContainer[]> {
  return JSON.parse(await podman(['ps', '--all', '--external', '--format', 'json'])) as ListedContainer[];
}

export interface InterruptedBuild {
  /** The containers the killed build left. */
  containers: ListedContainer[];
  /** Ends the killed step's process, removes its containers (`podman rm --force`) and the folder. */
  stop(): Promise<void>;
}

async function waitFor(file: string, timeoutMs: number, exited: () => string | undefined): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(file)) {
    const output = exited();
    if (output !== undefined) throw new Error(`the build to interrupt ended by itself:\n${output}`);
    if (Date.now() > deadline) throw new Error(`${file}: not within ${timeoutMs} ms`);
    await sleep(50);
  }
}

/** Starts `podman build` FROM `image`, kills it in its RUN step and returns what it left. */
export async function interruptBuild(image: string): Promise<InterruptedBuild> {
  const dir = await mkdtemp(join(tmpdir(), 'interrupted-build-'));
  // The step runs as the image's user, uid 1000.
  await chmod(dir, 0o777);
  await writeFile(
    join(dir, 'Containerfile'),
    `FROM ${image}\n` +
      'RUN touch /control/running && while [ ! -e /control/stop ]; do sleep 0.1; done && touch /control/stopped\n',
  );
  const before = new Set((await allContainers()).map((container) => container.Id));
  const build = spawn(
    'podman',
    ['build', '--volume', `${dir}:/control`, '--file', join(dir, 'Containerfile'), dir],
    // Its own process group, killed whole: podman and its OCI runtime wrapper.
    { env: podmanEnv(), detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const pid = build.pid;
  if (pid === undefined) {
    await rm(dir, { recursive: true, force: true });
    throw new Error('podman build did not start');
  }
  let output = '';
  build.stdout.on('data', (chunk: Buffer) => (output += chunk));
  build.stderr.on('data', (chunk: Buffer) => (output += chunk));
  let code: number | null | undefined;
  const closed = new Promise<void>((resolve) =>
    build.once('close', (exitCode) => {
      code = exitCode;
      resolve();
    }),
  );
  build.once('error', (error) => (output += String(error)));

  let started = false;
  const stop = async (): Promise<void> => {
    if (started) {
      await writeFile(join(dir, 'stop'), '');
      await waitFor(join(dir, 'stopped'), 10_000, () => undefined).catch(() => {});
    }
    const left = (await allContainers()).filter((container) => !before.has(container.Id));
    if (left.length > 0) await podman(['rm', '--force', ...left.map((container) => container.Id)]);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(join(dir, 'running'), 120_000, () => (code === undefined ? undefined : output));
    started = true;
    process.kill(-pid, 'SIGKILL');
    await closed;
    const containers = (await allContainers()).filter((container) => !before.has(container.Id));
    return { containers, stop };
  } catch (error) {
    if (code === undefined) process.kill(-pid, 'SIGKILL');
    await closed;
    await stop();
    throw error;
  }
}
