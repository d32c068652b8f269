// A PostgreSQL URL checked where it is read (the worker's start), so a mistake is one line then and
// not an odd failure at the first refund. Messages never echo the URL: it carries a password.

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
  return { host: parsed.host, database };
}
