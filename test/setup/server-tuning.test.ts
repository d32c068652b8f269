// The dev server (local runs, tests, the demo) and the production server (deploy/, PostgreSQL) share
// the tuning that a step's latency depends on: measured with `npm run bench` (docs/benchmark.md), so
// a value changed on one side only would make the two measure different things.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { DEV_SERVER_DYNAMIC_CONFIG } from '../../local-servers/dev-server';
import { REPO_ROOT } from '../helpers/harness';

const production = parse(
  fs.readFileSync(path.join(REPO_ROOT, 'deploy', 'dynamicconfig', 'production.yaml'), 'utf8'),
) as Record<string, Array<{ value: unknown; constraints: object }>>;

/** The server's own default for each key below (go.temporal.io/server v1.29 dynamicconfig). */
const SERVER_DEFAULTS: Record<string, string> = {
  'system.enableActivityEagerExecution': 'false',
  'history.transferProcessorMaxPollRPS': '20',
};

describe('server tuning shared by the dev server and deploy/dynamicconfig/production.yaml', () => {
  for (const [key, serverDefault] of Object.entries(SERVER_DEFAULTS)) {
    it(`${key}: the same value on both, not the server's default (${serverDefault})`, () => {
      const dev = DEV_SERVER_DYNAMIC_CONFIG[key];
      const prod = production[key];
      assert.ok(dev !== undefined, `the dev server does not set ${key}`);
      assert.ok(prod?.length === 1, `production.yaml does not set ${key} once`);
      assert.equal(String(prod[0]!.value), dev);
      assert.notEqual(dev, serverDefault);
    });
  }
});
