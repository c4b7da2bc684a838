// The chaos harness's sandbox (test/chaos/support/sandbox-process.ts), killed with SIGKILL while
// clients keep it busy: its totals must hold everything it answered, or a scenario counts quota
// consumed without a bulk where there was one (service-restart failed once that way).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunDir } from '../../deploy/local/processes.ts';
import { closeRunDir, openChaosRun } from '../chaos/support/run-dir.ts';
import { startSandboxProcess, type SandboxProcess } from '../chaos/support/sandbox-process.ts';

let run: RunDir;
let sandbox: SandboxProcess;
beforeAll(async () => {
  run = await openChaosRun(undefined, false);
  sandbox = await startSandboxProcess(run, { orgs: 20, seed: 5, mode: 'instant' });
}, 90_000);
afterAll(async () => {
  await sandbox?.stop();
  await closeRunDir(run, { keep: false });
});

/** Consumes one unit at a time, `clients` side by side, until the service dies; resolves with the units answered OK. */
async function consumeUntilDead(clients: number): Promise<number> {
  let answeredOk = 0;
  const client = async () => {
    for (;;) {
      const response = await fetch(`${sandbox.url}/quotas/consume`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-credential-username': 'chaos' },
        body: JSON.stringify({ service: { technicalKey: 'EXTD' }, quotaAmount: 1 }),
      }).catch(() => undefined);
      if (!response) return;
      if (((await response.json().catch(() => ({}))) as { status?: string }).status === 'OK') answeredOk += 1;
    }
  };
  await Promise.all(Array.from({ length: clients }, client));
  return answeredOk;
}

describe('the chaos harness killing the sandbox', () => {
  it('counts every quota consume the sandbox answered before its SIGKILL, none it did not', async () => {
    // Spread answers over time, so that some are always about to be processed.
    await sandbox.setFaults({ latencyMs: 5, latencyJitterMs: 40 });
    const consuming = consumeUntilDead(100);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await sandbox.kill('SIGKILL');
    const answeredOk = await consuming;
    expect(answeredOk).toBeGreaterThan(0);
    expect((await sandbox.collect()).quotaConsumed).toBe(answeredOk);
  });
});
