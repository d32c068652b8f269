// A PostgreSQL URL checked where it is read (the worker's start), so a mistake is one line then and
// not an odd failure at the first refund. Messages never echo the URL: it carries a password. The
// checks follow what the client (pg, pg-connection-string) does with the URL at its first
// connection: the query's port, host, user and password override the URL's, and sslcert, sslkey
// and sslrootcert are files it reads.
import { accessSync, constants } from 'node:fs';

export interface PostgresTarget {
  host: string;
  database: string;
}

/** Where `url` points (no user, no password), or an Error naming `name` and what is wrong. */
export function checkPostgresUrl(url: string, name: string): PostgresTarget {
  const like = 'postgres://user:password@host:5432/database';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(
      `${name} must be a URL like ${like} (a port from 1 to 65535; '/', '@', '%' and ':' in a password percent-encoded)`,
    );
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:')
    throw new Error(`${name} must be a postgres:// or postgresql:// URL (${like})`);
  if (!parsed.hostname) throw new Error(`${name} must be a URL with a host (${like})`);
  const path = parsed.pathname.replace(/^\//, '');
  // An unencoded '/' in the password ends the host part early: the rest, password included, reads as the path.
  if (path.includes('/') || path.includes('@'))
    throw new Error(
      `${name}: the part after the host is not one database name; percent-encode '/' and '@' in the password (%2F, %40)`,
    );
  let database: string;
  try {
    decodeURIComponent(parsed.username);
    decodeURIComponent(parsed.password);
    database = decodeURIComponent(path);
  } catch {
    throw new Error(`${name}: a '%' that starts no valid escape; percent-encode '%' in the password as %25`);
  }
  if (!database) throw new Error(`${name} must be a URL with a database (${like})`);
  checkPort(parsed.searchParams.get('port') ?? parsed.port, name);
  // A NUL ends a string of the wire protocol's startup message: the server would read another name.
  const encoded = [parsed.hostname, parsed.username, parsed.password].map(safeDecode);
  if ([database, ...encoded, ...parsed.searchParams.values()].some((part) => part.includes('\0')))
    throw new Error(`${name}: a NUL (%00) in the URL (database, user, password or a parameter); remove it`);
  for (const param of SSL_FILES) {
    const file = parsed.searchParams.get(param);
    if (file !== null && !readable(file))
      // The file's name is not echoed: a password typed without percent-encoding can end up in it.
      throw new Error(`${name}: ${param} names a file this process cannot read`);
  }
  return { host: parsed.host, database };
}

/** The query parameters the client reads as files at its first connection. */
const SSL_FILES = ['sslcert', 'sslkey', 'sslrootcert'] as const;

/** No port = the default 5432; otherwise 1 to 65535 (the URL parser alone lets 0 through, the query any text). */
function checkPort(port: string, name: string): void {
  if (port === '') return;
  const value = Number(port);
  if (!/^\d+$/.test(port) || value < 1 || value > 65535)
    throw new Error(`${name}: the port must be a number from 1 to 65535`);
}

function safeDecode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

function readable(file: string): boolean {
  try {
    accessSync(file, constants.R_OK);
    return true;
  } catch {
    return false;
  }
}
