// A TCP proxy a test can cut and restore: between a worker and the Temporal server, it makes the
// server unreachable without stopping it (the server keeps serving everybody else).
import net from 'node:net';
import type { AddressInfo } from 'node:net';

export interface TcpProxy {
  /** host:port to connect to instead of the upstream. */
  address: string;
  /** Drops every connection, and every new one at once, until restore(). */
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(upstream: string): Promise<TcpProxy> {
  const sep = upstream.lastIndexOf(':');
  const target = { host: upstream.slice(0, sep), port: Number(upstream.slice(sep + 1)) };
  const sockets = new Set<net.Socket>();
  let cut = false;
  const track = (socket: net.Socket): void => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server = net.createServer((client) => {
    track(client);
    if (cut) return void client.destroy();
    const remote = net.connect(target);
    track(remote);
    client.pipe(remote).pipe(client);
    client.once('close', () => remote.destroy());
    remote.once('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    cut: () => {
      cut = true;
      for (const socket of sockets) socket.destroy();
    },
    restore: () => {
      cut = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
