// A TCP connection to an HTTP server that sends nothing, or only the bytes given: what a TCP
// probe, a port scan or a client cut off mid-request leaves open on the server.
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';

export async function rawConnection(url: string, sent = ''): Promise<Socket> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  socket.on('error', () => {});
  await once(socket, 'connect');
  if (sent) socket.write(sent);
  // Read, so that the server's end of the connection shows as the socket's close.
  socket.resume();
  return socket;
}
