// A TCP proxy in front of the schema registry, owned by the test: "the registry away" means
// the proxy resets every open connection and every new one, while the registry itself (in
// memory) keeps its schemas.
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface RegistryProxy {
  /** The registry root as seen through the proxy. */
  url: string;
  /** Resets open connections and refuses new ones until back() is called. */
  away(): void;
  back(): void;
  close(): Promise<void>;
}

export async function startRegistryProxy(upstreamUrl: string): Promise<RegistryProxy> {
  const upstream = new URL(upstreamUrl);
  const sockets = new Set<Socket>();
  let refusing = false;
  const server: Server = createServer((client) => {
    if (refusing) {
      client.resetAndDestroy();
      return;
    }
    const target = connect(Number(upstream.port), upstream.hostname);
    for (const socket of [client, target]) {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        target.destroy();
      });
    }
    client.pipe(target).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address !== 'object') throw new Error('registry proxy has no port');
  const proxied = new URL(upstreamUrl);
  proxied.port = String(address.port);
  return {
    url: proxied.toString().replace(/\/$/, ''),
    away() {
      refusing = true;
      for (const socket of sockets) socket.resetAndDestroy();
    },
    back() {
      refusing = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
