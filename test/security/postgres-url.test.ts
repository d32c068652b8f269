// The start check of a PostgreSQL URL: what the client would only refuse at its first connection is
// refused here, in one line naming the variable, never echoing the password.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { checkPostgresUrl } from '../../runtime/postgres-url';

const NAME = 'AGENT_RETAIL_DATABASE_URL';
const PW = 'S3CRETpw';

function refusal(url: string): string {
  try {
    checkPostgresUrl(url, NAME);
  } catch (err) {
    return (err as Error).message;
  }
  assert.fail(`accepted: ${url}`);
}

describe('checkPostgresUrl', () => {
  it('refuses a port out of 1-65535 in the URL or the query, a NUL anywhere, an SSL file it cannot read', () => {
    for (const url of [
      `postgres://a:${PW}@h:0/db`,
      `postgres://a:${PW}@h:5432/db?port=0`,
      `postgres://a:${PW}@h/db?port=70000`,
      `postgres://a:${PW}@h/db?port=x`,
      `postgres://a:${PW}@h/ret%00ail`,
      `postgres://a:S3CRET%00pw@h/db`,
      `postgres://a:${PW}@h/db?application_name=x%00y`,
      `postgres://a:${PW}@h/db?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem`,
      `postgres://a:${PW}@h/db?sslcert=/nonexistent/c.pem`,
      `postgres://a:${PW}@h/db?sslkey=/nonexistent/k.pem`,
    ]) {
      const message = refusal(url);
      assert.ok(message.startsWith(NAME), message);
      assert.doesNotMatch(message, /S3CRET|\n/);
    }
  });

  it('accepts the default port, a port in range and an SSL file that is there', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'pg-url-'));
    try {
      const ca = path.join(dir, 'ca.pem');
      writeFileSync(ca, 'not checked here');
      assert.deepEqual(checkPostgresUrl(`postgres://a:${PW}@h/db`, NAME), { host: 'h', database: 'db' });
      assert.deepEqual(checkPostgresUrl(`postgres://a:${PW}@h:65535/db?port=5433&sslrootcert=${ca}`, NAME), {
        host: 'h:65535',
        database: 'db',
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('checkPostgresUrl, any URL', () => {
  // A password typed without percent-encoding spills into the host, the path or the query; whatever
  // the check says about such a URL is one line naming the variable and none of the password.
  it('accepts, or refuses in one line that names the variable and echoes no part of the password', () => {
    const secret = fc.stringMatching(/^[A-Za-z0-9]{8,16}$/).map((s) => `S3CRET${s}`);
    const special = fc.constantFrom('/', '@', '%', ':', '?', '#', '&', '=', '%00', '%2F', ' ', '\n');
    const password = fc
      .array(fc.oneof(secret, special, fc.constantFrom('db', 'sslcert', 'sslrootcert', 'port', '5432')), {
        minLength: 1,
        maxLength: 8,
      })
      .map((parts) => parts.join(''));
    const query = fc
      .array(fc.tuple(fc.constantFrom('port', 'sslcert', 'sslkey', 'sslrootcert', 'sslmode', 'host'), fc.string()), {
        maxLength: 3,
      })
      .map((pairs) => (pairs.length ? '?' + pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&') : ''));
    fc.assert(
      fc.property(
        password,
        fc.constantFrom('', ':5432', ':0', ':99999'),
        fc.constantFrom('db', 'ret ail', ''),
        query,
        (pw, port, db, q) => {
          const url = `postgres://user:${pw}@h${port}/${db}${q}`;
          let message: string;
          try {
            checkPostgresUrl(url, NAME);
            return;
          } catch (err) {
            assert.ok(err instanceof Error);
            message = err.message;
          }
          assert.ok(message.startsWith(NAME), message);
          assert.doesNotMatch(message, /\n/);
          // Every part of the password a user would recognise: its secret runs, raw or encoded.
          for (const run of pw.match(/S3CRET[A-Za-z0-9]*/g) ?? [])
            assert.ok(!message.includes(run.slice(0, 10)), message);
        },
      ),
      // Found by hand: a password with '/', '?' and '=' unencoded puts its tail in sslcert's value.
      { numRuns: 2000, examples: [['5432/db?sslcert=S3CRETabcdefgh', '', 'db', '']] },
    );
  });
});
