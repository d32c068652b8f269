// How a tool call runs when a worker may hang: the activity beats while a read-only tool runs, and
// the workflow's options for new runs notice a dead attempt at the heartbeat timeout and give a call
// enough attempts, in a bounded time, to get past every poll a hung worker holds. Effects keep
// their own options. The fault matrix shows it on real workers
// (fault-matrix.e2e: "hung worker, no cancel").
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MockActivityEnvironment } from '@temporalio/testing';
import { z } from 'zod';
import type { Duration } from '@temporalio/common';
import { msToNumber } from '@temporalio/common/lib/time';
import { HEARTBEAT_EVERY_MS, toolActivity } from '../../activities/tools/tool-activity';
import type { ToolDeps } from '../../activities/tools/tool-activity';
import { SEED_DATA } from '../../domains/support/seed-data';
import { supportDomain } from '../../domains/support/index';
import { defineTool } from '../../common/tools/tool';
import type { ToolDefinition } from '../../common/tools/tool';
import {
  HUNG_WORKER_POLLS,
  LOCAL_RETRY_THRESHOLD_MS,
  LOCAL_TOOL_TIMEOUT_S,
  localToolActivityOptions,
  runsAsLocalActivity,
  TOOL_HEARTBEAT_TIMEOUT_S,
  toolActivityOptions,
} from '../../workflows/calls/tool-options';

const RUNS_FOR_MS = 1_000;

/** A tool that takes RUNS_FOR_MS: read-only, or an effect (which beats on its own, if at all). */
const slowTool = (effectful: boolean): ToolDefinition =>
  defineTool({
    name: effectful ? 'slow_effect' : 'slow_lookup',
    description: 'takes a second',
    args: z.strictObject({}),
    timeoutSeconds: 10,
    maxAttempts: 3,
    effectful,
    async handler(_args, ctx) {
      await new Promise((r) => setTimeout(r, RUNS_FOR_MS));
      return ctx.envelope('test', true, {});
    },
  });

const deps: ToolDeps<unknown> = {
  services: { data: async () => SEED_DATA, refunds: () => assert.fail('no refunds here') },
  faults: { pauseBeforeCommitMs: 0, pauseAfterCommitMs: 0 },
};

async function heartbeatsOf(tool: ToolDefinition): Promise<number> {
  const env = new MockActivityEnvironment();
  let beats = 0;
  env.on('heartbeat', () => beats++);
  await env.run(toolActivity(tool, deps), {
    args: {},
    idempotency_key: 'k',
    principal: '42',
  });
  return beats;
}

describe('a tool call on a fleet where a worker may hang', () => {
  it('a read-only tool heartbeats while it runs; an effect is left to beat on its own', async () => {
    const beats = await heartbeatsOf(slowTool(false));
    // Every 250 ms over a second: well inside the 2 s heartbeat timeout, with room for a slow machine.
    assert.ok(beats >= RUNS_FOR_MS / HEARTBEAT_EVERY_MS / 2, `${beats} heartbeats in ${RUNS_FOR_MS} ms`);
    assert.equal(await heartbeatsOf(slowTool(true)), 0);
  });

  it('new runs: a heartbeat timeout, and enough attempts and time to get past a hung worker', () => {
    for (const spec of supportDomain.tools.filter((t) => !t.effectful)) {
      const o = toolActivityOptions(spec);
      const s = (d: Duration | undefined) => msToNumber(d!) / 1000;
      assert.equal(s(o.heartbeatTimeout), TOOL_HEARTBEAT_TIMEOUT_S, spec.name);
      assert.equal(s(o.startToCloseTimeout), spec.timeoutSeconds, spec.name);
      // The attempt running when the worker hung, one per poll it held, and then the tool's own attempts.
      const dead = 1 + HUNG_WORKER_POLLS;
      assert.ok(o.retry!.maximumAttempts! >= dead + spec.maxAttempts - 1, spec.name);
      // Each dead attempt costs a heartbeat timeout and at most the longest retry interval.
      const deadS = dead * (TOOL_HEARTBEAT_TIMEOUT_S + s(o.retry!.maximumInterval));
      assert.ok(s(o.scheduleToCloseTimeout) >= deadS + spec.timeoutSeconds, spec.name);
      assert.ok(s(o.scheduleToCloseTimeout) <= deadS + spec.timeoutSeconds * spec.maxAttempts, spec.name);
    }
  });

  it('effects keep their options: a heartbeat, their own attempts, no schedule-to-close bound', () => {
    const effects = supportDomain.tools.filter((t) => t.effectful);
    assert.ok(effects.length > 0, 'an effectful tool is checked');
    for (const spec of effects) {
      assert.deepEqual(toolActivityOptions(spec), {
        startToCloseTimeout: `${spec.timeoutSeconds} seconds`,
        heartbeatTimeout: '2 seconds',
        cancellationType: 'WAIT_CANCELLATION_COMPLETED',
        retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumAttempts: spec.maxAttempts },
      });
    }
  });
});

describe('read-only tools as local activities', () => {
  it('which tools: reads unless they opt out; never an effect', () => {
    const local = supportDomain.tools.filter((t) => runsAsLocalActivity(t)).map((t) => t.name);
    assert.deepEqual(local.sort(), ['get_user_billing', 'get_user_profile']);
    assert.equal(runsAsLocalActivity({ ...slowTool(true), localActivity: true }), false, 'an effect never is');
    assert.equal(runsAsLocalActivity(slowTool(false)), true);
    assert.equal(runsAsLocalActivity({ ...slowTool(false), localActivity: false }), false);
  });

  it("the tool's attempts, each cut short, retried in the task only while the backoff is short", () => {
    for (const timeoutSeconds of [1, 5, 10, 30]) {
      const spec = { ...slowTool(false), timeoutSeconds };
      const o = localToolActivityOptions(spec);
      const s = (d: Duration | undefined) => msToNumber(d!) / 1000;
      assert.equal(s(o.startToCloseTimeout), Math.min(timeoutSeconds, LOCAL_TOOL_TIMEOUT_S));
      assert.equal(o.retry!.maximumAttempts, spec.maxAttempts);
      assert.equal(msToNumber(o.localRetryThreshold!), LOCAL_RETRY_THRESHOLD_MS);
      assert.ok(s(o.scheduleToCloseTimeout) >= spec.maxAttempts * s(o.startToCloseTimeout));
      assert.equal(o.cancellationType, 'TRY_CANCEL');
    }
  });
});
