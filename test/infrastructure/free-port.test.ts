// The ports the local services (Kafka, the registry, the sandbox, `run`'s metrics in tests) are
// started on.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../deploy/local/processes.ts';

const ephemeralStart = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0]);

const listenOn = (port: number) =>
  new Promise<void>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => server.close(() => resolve()));
  });

describe('freePort', () => {
  it("regression: a port for a local service came from the kernel's ephemeral range, where an outgoing connection could take it before the service bound it (CI: the chaos broker's controller 'failed to bind to 127.0.0.1:41059: Address already in use')", async () => {
    for (let i = 0; i < 20; i += 1) {
      const port = await freePort();
      expect(port).toBeLessThan(ephemeralStart);
      expect(port).toBeGreaterThanOrEqual(1024);
      await listenOn(port);
    }
  });

  it("regression: two choices in a row could draw the same port, which nobody had bound yet (CI: a broker's listener and controller on one port, 'If you have two listeners on the same port then one needs to be IPv4 and the other IPv6'); now a process is never handed one port twice", async () => {
    // 2,000 draws from the ~12,000 ports below the ephemeral range: without the fix, a repeat
    // is all but certain.
    const ports = new Set<number>();
    for (let i = 0; i < 2_000; i += 1) ports.add(await freePort());
    expect(ports.size).toBe(2_000);
  });
});
