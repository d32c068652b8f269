// PostgreSQL's server programs (Debian's packages put them in /usr/lib/postgresql/<major>/bin) and
// the user to run them as: PostgreSQL refuses to run as root.
import fs from 'node:fs';
import path from 'node:path';
import { findOnPath, isExecutableFile } from './go-install';

export interface OsUser {
  uid: number;
  gid: number;
}

/** AGENT_POSTGRES_BIN_DIR, else the folder of `initdb` on PATH, else the newest /usr/lib/postgresql/N/bin. */
export function findPostgresBinDir(): string {
  const fromEnv = process.env.AGENT_POSTGRES_BIN_DIR;
  const candidates = [
    ...(fromEnv ? [fromEnv] : []),
    ...[findOnPath('initdb')].filter((p): p is string => !!p).map((p) => path.dirname(fs.realpathSync(p))),
    ...(fs.existsSync('/usr/lib/postgresql')
      ? fs
          .readdirSync('/usr/lib/postgresql')
          .filter((v) => /^\d+$/.test(v))
          .sort((a, b) => Number(b) - Number(a))
          .map((v) => `/usr/lib/postgresql/${v}/bin`)
      : []),
  ];
  const dir = candidates.find((d) =>
    ['initdb', 'postgres', 'pg_isready'].every((b) => isExecutableFile(path.join(d, b))),
  );
  if (dir) return dir;
  if (fromEnv) throw new Error(`AGENT_POSTGRES_BIN_DIR=${fromEnv} does not hold initdb, postgres and pg_isready`);
  throw new Error(
    'PostgreSQL server programs not found (initdb, postgres, pg_isready): install them (Debian: apt-get install postgresql) or set AGENT_POSTGRES_BIN_DIR',
  );
}

/** Undefined when we are not root (PostgreSQL then runs as us); else the `postgres` system user. */
export function postgresUser(): OsUser | undefined {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  const line = fs
    .readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  const [, , uid, gid] = line?.split(':') ?? [];
  if (!uid || !gid) {
    throw new Error(
      'PostgreSQL refuses to run as root, and there is no `postgres` user to run it as: run as another user, or create it (useradd --system postgres)',
    );
  }
  return { uid: Number(uid), gid: Number(gid) };
}
