// Worker Deployment Versions: a run started on version A stays on A (PINNED) after an operator makes
// version B current with Temporal's own CLI, and finishes on A's worker; a run started after that
// goes to B. Each worker is a real `npm run worker` process with AGENT_WORKER_VERSIONING=1. The
// fleet-wide LLM limiter, which never ends, is not pinned: it moves to B once B is current.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { runResult } from '../../client/agent-client';
import { limiterWorkflowId } from '../../common/limiter/llm-limiter';
import { buildIdFromEnv } from '../../worker/build-id';
import { pendingApproval } from '../../client/approvals';
import { eventually, uniqueId } from '../helpers/harness';
import type { WorkerProcess } from '../../local-servers/worker-process';
import { agentFixture } from '../helpers/agent-fixture';
import { runCli } from '../helpers/cli';
import { billingOf, finalAnswer, refundInput, refundOf } from '../helpers/refund-fixtures';

const exec = promisify(execFile);
const EventType = temporal.api.enums.v1.EventType;

const fixture = agentFixture({ queue: 'versions', refunds: true, worker: false });
const deploymentName = uniqueId('agent-deployment');
// A limiter of this file's own: its scope is the model, a made-up one with a price (docs/cost.md).
const MODEL = uniqueId('versioning-model');
const PRICES_DIR = mkdtempSync(path.join(tmpdir(), 'versioning-prices-'));
const PRICES_FILE = path.join(PRICES_DIR, 'prices.json');
writeFileSync(PRICES_FILE, JSON.stringify({ [MODEL]: { input_usd_per_mtok: 0.4, output_usd_per_mtok: 1.6 } }));

/** A worker of the test's deployment; without a build id, the one `npm run build` recorded. */
function versionedWorker(buildId?: string): WorkerProcess {
  return fixture.startWorker({
    AGENT_WORKER_VERSIONING: '1',
    AGENT_DEPLOYMENT_NAME: deploymentName,
    OPENAI_MODEL: MODEL,
    AGENT_PRICES_FILE: PRICES_FILE,
    AGENT_LLM_TPM: '1000000',
    ...(buildId ? { AGENT_BUILD_ID: buildId } : {}),
  });
}

/** Waits for the worker's `worker ready` line: it polls, and its deployment has a current version. */
async function ready(worker: WorkerProcess): Promise<void> {
  await worker.ready;
  await eventually('the worker ready line', () => (worker.output().includes('worker ready:') ? true : undefined));
}

async function currentBuildId(client: Client): Promise<string | undefined> {
  const described = await client.workflowService.describeWorkerDeployment({
    namespace: fixture.env.namespace,
    deploymentName,
  });
  return described.workerDeploymentInfo?.routingConfig?.currentDeploymentVersion?.buildId ?? undefined;
}

/** Who completed each workflow task of the run: [build id, worker identity]. */
async function workflowTaskCompletions(id: string): Promise<Array<[string, string]>> {
  const history = await fixture.client.workflow.getHandle(id).fetchHistory();
  return (history.events ?? [])
    .filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)
    .map((e) => {
      const done = e.workflowTaskCompletedEventAttributes!;
      return [done.deploymentVersion?.buildId ?? '', done.identity ?? ''];
    });
}

async function temporalCli(args: string[]): Promise<void> {
  const cli = process.env.TEMPORAL_CLI_PATH;
  assert.ok(cli, 'TEMPORAL_CLI_PATH is set by `npm test`');
  await exec(cli, [...args, '--address', fixture.env.address, '--namespace', fixture.env.namespace]);
}

describe('worker deployment versions', () => {
  after(() => rmSync(PRICES_DIR, { recursive: true, force: true }));
  it('a run pinned to A finishes on A after B is made current; a new run goes to B', async () => {
    const buildA = buildIdFromEnv({});
    assert.match(buildA, /^\d+\.\d+\.\d+(\+[0-9a-f]+)?$/, 'the package version and the commit');
    const workerA = versionedWorker();
    await ready(workerA);
    // The first version of a fresh deployment makes itself current: no operator step.
    assert.equal(await currentBuildId(fixture.client), buildA);

    const user = fixture.refunds.nextUser();
    const { id, handle } = await fixture.start(
      [billingOf(user), refundOf(user, 49), finalAnswer()],
      refundInput(user, { budget: { max_seconds: 120 } }),
    );
    await eventually('the refund awaiting approval', () => pendingApproval(handle));
    const pinned = (await handle.describe()).raw.workflowExecutionInfo?.versioningInfo;
    assert.equal(pinned?.behavior, temporal.api.enums.v1.VersioningBehavior.VERSIONING_BEHAVIOR_PINNED);
    assert.equal(pinned?.deploymentVersion?.buildId, buildA);

    const workerB = versionedWorker('build-b');
    await ready(workerB);
    assert.equal(await currentBuildId(fixture.client), buildA, 'a new version does not take over by itself');
    // The operator's rollout; B's version is known to the server once B has polled, which may lag.
    await eventually('B made current', async () => {
      await temporalCli([
        'worker',
        'deployment',
        'set-current-version',
        '--deployment-name',
        deploymentName,
        '--build-id',
        'build-b',
        '--yes',
      ]);
      return true;
    });
    assert.equal(await currentBuildId(fixture.client), 'build-b');

    const approved = await runCli(fixture.env, ['approve', id], { AGENT_OPERATOR: 'test-operator' });
    assert.equal(approved.code, 0, approved.stdout + approved.stderr);
    const result = await runResult(handle);
    assert.equal(result.stop_reason, 'success');
    assert.deepEqual(
      (await fixture.refunds.rows({ workflow_id: id })).map((r) => r.state),
      ['confirmed'],
    );
    const pinnedTasks = await workflowTaskCompletions(id);
    assert.ok(pinnedTasks.length >= 3, `workflow tasks: ${JSON.stringify(pinnedTasks)}`);
    for (const task of pinnedTasks) assert.deepEqual(task, [buildA, workerA.identity]);

    const next = await fixture.run([finalAnswer('Nothing to refund.')]);
    assert.equal(next.result.stop_reason, 'success');
    const newTasks = await workflowTaskCompletions(next.id);
    assert.ok(newTasks.length >= 1);
    for (const task of newTasks) assert.deepEqual(task, ['build-b', workerB.identity]);

    // The limiter granted both runs' decisions: it started on A and follows the current version.
    const limiter = limiterWorkflowId(MODEL);
    const limiterInfo = (await fixture.client.workflow.getHandle(limiter).describe()).raw.workflowExecutionInfo;
    assert.equal(
      limiterInfo?.versioningInfo?.behavior,
      temporal.api.enums.v1.VersioningBehavior.VERSIONING_BEHAVIOR_AUTO_UPGRADE,
    );
    const limiterTasks = await workflowTaskCompletions(limiter);
    assert.deepEqual(limiterTasks[0], [buildA, workerA.identity]);
    assert.deepEqual(limiterTasks.at(-1), ['build-b', workerB.identity]);
  });
});
