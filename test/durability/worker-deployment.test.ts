// The worker's deployment version from its environment and the build's record (worker/build-id.ts,
// worker/deployment.ts): off unless asked for, a build id from the version and the commit, an
// explicit AGENT_BUILD_ID over both, and one clear line when there is neither.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { buildIdFromEnv } from '../../worker/build-id';
import { deploymentFromEnv, describeDeployment, workerDeploymentOptions } from '../../worker/deployment';

function withInfo(info: object | undefined, check: (file: string) => void): void {
  const dir = mkdtempSync(path.join(tmpdir(), 'build-info-'));
  const file = path.join(dir, 'build-info.json');
  if (info) writeFileSync(file, JSON.stringify(info));
  try {
    check(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('the build id', () => {
  it('is the version and the commit the build recorded', () =>
    withInfo({ version: '1.2.3', commit: 'abc123def456' }, (file) =>
      assert.equal(buildIdFromEnv({}, file), '1.2.3+abc123def456'),
    ));

  it('is the version alone when the build knew no commit', () =>
    withInfo({ version: '1.2.3' }, (file) => assert.equal(buildIdFromEnv({}, file), '1.2.3')));

  it('is AGENT_BUILD_ID when set', () =>
    withInfo({ version: '1.2.3', commit: 'abc' }, (file) =>
      assert.equal(buildIdFromEnv({ AGENT_BUILD_ID: ' release-7 ' }, file), 'release-7'),
    ));

  it('without a record or AGENT_BUILD_ID: one line saying what to do', () =>
    withInfo(undefined, (file) =>
      assert.throws(() => buildIdFromEnv({}, file), /is missing \(run `npm run build`\) and AGENT_BUILD_ID is unset$/),
    ));
});

describe('the deployment version', () => {
  it('is off unless AGENT_WORKER_VERSIONING=1', () => {
    assert.equal(deploymentFromEnv({ AGENT_BUILD_ID: 'b' }), undefined);
    assert.equal(deploymentFromEnv({ AGENT_WORKER_VERSIONING: 'yes', AGENT_BUILD_ID: 'b' }), undefined);
    assert.equal(describeDeployment(undefined), 'unversioned');
  });

  it('names the deployment (default durable-react-agent) and pins runs by default', () => {
    const deployment = deploymentFromEnv({ AGENT_WORKER_VERSIONING: '1', AGENT_BUILD_ID: 'b1' });
    assert.deepEqual(deployment, { deploymentName: 'durable-react-agent', buildId: 'b1' });
    assert.deepEqual(workerDeploymentOptions(deployment!), {
      version: { deploymentName: 'durable-react-agent', buildId: 'b1' },
      useWorkerVersioning: true,
      defaultVersioningBehavior: 'PINNED',
    });
    assert.deepEqual(
      deploymentFromEnv({ AGENT_WORKER_VERSIONING: '1', AGENT_BUILD_ID: 'b2', AGENT_DEPLOYMENT_NAME: 'shop' }),
      { deploymentName: 'shop', buildId: 'b2' },
    );
  });
});
