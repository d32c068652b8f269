// The worker's MCP connections: one per server config and scope (a run: a server may keep state
// per session, such as whom it authenticated, and no session may carry it from one run into
// another), shared by the scope's calls (an MCP session costs a handshake, a stdio server a
// process spawn). A connection that fails is
// retired: the next call connects again, and the old one closes once its last call is over. One
// idle for a while is closed; all close when the worker shuts down. A cancelled call leaves its
// connection open, so the SDK's notifications/cancelled goes out on it. The MCP SDK is loaded with
// the first connection, not with the worker (it costs about a third of a worker's start).
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { McpConnection } from '../../common/mcp/config';

/** Connections kept at most: the least recently used is retired first. */
const MAX_CONNECTIONS = 32;
/** A connection nobody used for this long is closed (a stdio server's process ends with it). */
const IDLE_MS = 60_000;
const CONNECT_TIMEOUT_MS = 15_000;

interface Pooled {
  client: Promise<Client>;
  inUse: number;
  retired: boolean;
  idle?: NodeJS.Timeout;
}

export class McpPool {
  private readonly pooled = new Map<string, Pooled>();

  constructor(private readonly env: NodeJS.ProcessEnv = process.env) {}

  /**
   * Runs `use` on the server's pooled connection (connecting first when there is none). A
   * connection that fails with `failure.broken(err)` is retired; when it was a reused one and
   * `failure.stale(err)` (it was gone before the call), `use` runs once more on a new one.
   */
  async with<T>(
    server: string,
    connection: McpConnection,
    signal: AbortSignal,
    scope: string,
    use: (client: Client) => Promise<T>,
    failure: { broken: (err: unknown) => boolean; stale: (err: unknown) => boolean },
  ): Promise<T> {
    const key = JSON.stringify([server, connection, scope]);
    const reused = this.pooled.get(key);
    const entry = reused ?? this.open(key, server, connection, signal);
    try {
      return await this.run(key, entry, use, failure.broken, signal);
    } catch (err) {
      if (!reused || signal.aborted || !failure.stale(err)) throw err;
      return this.run(key, this.open(key, server, connection, signal), use, failure.broken, signal);
    }
  }

  /** Closes every connection (the worker is shutting down). */
  async close(): Promise<void> {
    const all = [...this.pooled.entries()];
    this.pooled.clear();
    await Promise.all(all.map(([, entry]) => closeClient(entry)));
  }

  private async run<T>(
    key: string,
    entry: Pooled,
    use: (client: Client) => Promise<T>,
    broken: (err: unknown) => boolean,
    signal: AbortSignal,
  ): Promise<T> {
    entry.inUse++;
    clearTimeout(entry.idle);
    if (this.pooled.get(key) === entry) {
      this.pooled.delete(key); // most recently used last: the map's order is the retirement order
      this.pooled.set(key, entry);
    }
    try {
      return await use(await entry.client);
    } catch (err) {
      // The next call starts afresh rather than finding out again. A cancelled call's connection is
      // fine, and carries its notifications/cancelled (sent without being awaited) still.
      if (!signal.aborted && broken(err)) this.retire(key, entry);
      throw err;
    } finally {
      entry.inUse--;
      if (entry.inUse === 0) {
        if (entry.retired) void closeClient(entry);
        else {
          entry.idle = setTimeout(() => this.retire(key, entry), IDLE_MS);
          entry.idle.unref();
        }
      }
    }
  }

  private open(key: string, server: string, connection: McpConnection, signal: AbortSignal): Pooled {
    const old = this.pooled.get(key);
    if (old) this.retire(key, old);
    // The connection outlives the call that opened it: bounded by its own timeout as well.
    const connected = (async () => {
      const [{ Client }, { transportFor }] = await Promise.all([
        import('@modelcontextprotocol/sdk/client/index.js'),
        import('./transport'),
      ]);
      const client = new Client({ name: 'durable-react-agent', version: '0.1.0' });
      const transport = transportFor(server, connection, this.env);
      await client.connect(transport, { signal: AbortSignal.any([signal, AbortSignal.timeout(CONNECT_TIMEOUT_MS)]) });
      client.onclose = () => this.retire(key, entry);
      return client;
    })();
    const entry: Pooled = { client: connected, inUse: 0, retired: false };
    entry.client.catch(() => this.retire(key, entry));
    this.pooled.set(key, entry);
    for (const [oldest, other] of this.pooled) {
      if (this.pooled.size <= MAX_CONNECTIONS) break;
      this.retire(oldest, other);
    }
    return entry;
  }

  /** Out of the pool; closed now if no call uses it, else when its last call ends. */
  private retire(key: string, entry: Pooled): void {
    if (this.pooled.get(key) === entry) this.pooled.delete(key);
    if (entry.retired) return;
    entry.retired = true;
    clearTimeout(entry.idle);
    if (entry.inUse === 0) void closeClient(entry);
  }
}

async function closeClient(entry: Pooled): Promise<void> {
  clearTimeout(entry.idle);
  const client = await entry.client.catch(() => undefined);
  await client?.close().catch(() => undefined);
}

/** The worker's pool, shared by its MCP activities. */
export const mcpPool = new McpPool();
