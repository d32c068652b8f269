import net from 'node:net';

/**
 * A TCP port free on 127.0.0.1 right now, picked at random between 20000 and 32000: below Linux's
 * ephemeral range (32768-60999), so no outgoing connection is handed it between this check and the
 * server's bind. (A port the kernel picks, bind to 0, is in that range: a dev server's UI port was
 * taken that way under a busy test run.)
 */
export async function freePort(avoid: readonly number[] = []): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (!avoid.includes(port) && (await isPortFree(port))) return port;
  }
  throw new Error('freePort: no free port between 20000 and 32000');
}

/** True if nothing is listening on 127.0.0.1:port right now (we can bind it ourselves). */
export async function isPortFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen(port, host, () => srv.close(() => resolve(true)));
  });
}
