// Found by an adversary: `agent cancel --stuck` promises to leave alone a run rightly waiting for a person
// (docs/cli.md) unless --include-waiting. It asks each run's `state` once, then asks the operator
// to confirm, then cancels the runs it counted without asking them again. A run that was deciding
// when listed and that escalates to a person while the operator reads the list is cancelled anyway.
// Reproduce: a run whose model answers slowly; `agent cancel --stuck --older-than 1ms --no-wait`
// in a terminal; the run escalates (awaiting_approval) before the operator types "y".
import * as path from 'node:path';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { agentFixture } from '../helpers/agent-fixture';
import { DIST, eventually } from '../helpers/harness';
import { spawnOnTerminal } from '../helpers/pseudo-terminal';
import { escalate } from '../../offline-model/scripted-replies';
import { runState } from '../../client/agent-client';

const fixture = agentFixture({ queue: 'adv-stuck-race' });

describe('cancel --stuck and a run that starts waiting for a person before the cancel', () => {
  it('does not cancel a run that awaits a person when the cancel is sent', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    // Step 1's decision comes only when the test says so, then it escalates to a person.
    const { id, handle } = await fixture.start(async () => {
      await gate;
      return escalate('the customer asks for an exception; a person must decide');
    });
    await eventually('the run asks the model for step 1', () =>
      fixture.llm.requests(id).length > 0 ? true : undefined,
    );

    // The CLI in a pseudo-terminal (`script`), as an operator runs it, so it asks for confirmation.
    const cli = [
      process.execPath,
      path.join(DIST, 'cli', 'cli.js'),
      'cancel',
      '--stuck',
      '--older-than',
      '1ms',
      '--no-wait',
    ];
    const child = spawnOnTerminal(cli, {
      ...process.env,
      TEMPORAL_ADDRESS: fixture.env.address,
      TEMPORAL_NAMESPACE: fixture.env.namespace,
      TEMPORAL_TASK_QUEUE: fixture.env.taskQueue,
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await eventually('the CLI asks for confirmation', () => (/\[y\/N\]/.test(output) ? true : undefined), 60_000);
      assert.match(output, new RegExp(id), 'the deciding run is listed as stuck');

      // While the operator reads the list, the run escalates: it now rightly waits for a person.
      release();
      await eventually('the run awaits a person', async () =>
        (await runState(handle)).phase === 'awaiting_approval' ? true : undefined,
      );

      child.stdin.write('y\n');
      await exited;
    } finally {
      child.kill();
    }
    // The cancel request is in the history at once (the run may take a moment to end by it).
    const history = await handle.fetchHistory();
    const cancelRequested = (history.events ?? []).some((e) => e.workflowExecutionCancelRequestedEventAttributes);
    assert.equal(
      cancelRequested,
      false,
      `a run awaiting a person's answer to an escalation was cancelled by cancel --stuck without --include-waiting:\n${output}`,
    );
  });
});
