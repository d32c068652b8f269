// PostgreSQL's settings for this workload, from deploy/postgres/postgresql.conf: `name = value` lines
// (comments after #). local-servers/postgres-server.ts passes them as `-c name=value`; docker-compose.yml
// lists the same flags (test/setup/compose.test.ts checks that they agree).
import fs from 'node:fs';

/** `name=value` pairs of a postgresql.conf-style file; none when it does not exist. */
export function readPostgresSettings(file: string): string[] {
  if (!fs.existsSync(file)) return [];
  const out: string[] = [];
  for (const [i, raw] of fs.readFileSync(file, 'utf8').split('\n').entries()) {
    const line = raw.replace(/#.*/, '').trim();
    if (!line) continue;
    const m = /^([a-z_][a-z0-9_.]*)\s*=\s*'?([^'\s]+)'?$/i.exec(line);
    if (!m) throw new Error(`${file}:${i + 1}: expected "name = value", got ${JSON.stringify(raw)}`);
    out.push(`${m[1]}=${m[2]}`);
  }
  return out;
}
