// The LLM limiter under payload encryption, sent what its worker cannot decrypt (random bytes marked
// `binary/encrypted`, under the deployment's key id and under an unknown one) with Temporal's own
// CLI: the acquire Update is refused, each Signal dropped with one log line; its workflow task never
// fails and it goes on granting leases (docs/security.md, "A payload a worker cannot decrypt").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { limiterQuery, limiterWorkflowId } from '../../common/limiter/llm-limiter';
import { final } from '../../offline-model/scripted-replies';
import { agentFixture } from '../helpers/agent-fixture';
import { codecEnv, newKey } from '../helpers/codec';
import { eventually, uniqueId } from '../helpers/harness';
import { temporalCli } from '../helpers/temporal-cli-run';

const { EventType } = temporal.api.enums.v1;
const MODEL = uniqueId('limiter-undecodable-model');
const PRICES_FILE = path.join(mkdtempSync(path.join(tmpdir(), 'limiter-undecodable-')), 'prices.json');
writeFileSync(PRICES_FILE, JSON.stringify({ [MODEL]: { input_usd_per_mtok: 0.4, output_usd_per_mtok: 1.6 } }));
const keys = codecEnv({ k1: newKey() }, 'k1');

const fixture = agentFixture({
  queue: 'limiter-undecodable',
  workerEnv: {
    ...keys,
    OPENAI_MODEL: MODEL,
    AGENT_PRICES_FILE: PRICES_FILE,
    AGENT_LLM_MAX_IN_FLIGHT: '2',
    AGENT_LLM_TPM: '100000',
    AGENT_LLM_LEASE_TTL_SECONDS: '60',
  },
  clientEnv: { ...process.env, ...keys },
});

const KEY_IDS = ['k1', 'nope'];
const SIGNALS = ['release', 'pause', 'withdraw'];

test('undecryptable acquire Updates are refused and Signals dropped; the limiter never fails a task and still grants', async () => {
  // A first run's decision starts the limiter.
  assert.equal((await fixture.run([final('first')])).result.stop_reason, 'success');
  const limiterId = limiterWorkflowId(MODEL);
  const limiter = fixture.client.workflow.getHandle(limiterId);
  const granted = (await limiter.query(limiterQuery)).granted.granted;

  const send = (kind: 'update' | 'signal', name: string, keyId: string) =>
    temporalCli(fixture.env, [
      'workflow',
      ...(kind === 'update' ? ['update', 'execute'] : ['signal']),
      '--workflow-id',
      limiterId,
      '--name',
      name,
      '--input-meta',
      'encoding=binary/encrypted',
      '--input-meta',
      `encryption-key-id=${keyId}`,
      '--input-base64',
      '--input',
      randomBytes(64).toString('base64'),
    ]);
  for (const keyId of KEY_IDS) {
    // Refused by the worker (its argument does not convert), not timed out.
    const refused = await send('update', 'acquire', keyId);
    assert.match(refused.stderr, /unable to update workflow: .*ValueError/, `acquire under ${keyId}`);
    for (const name of SIGNALS) assert.equal((await send('signal', name, keyId)).code, 0, `${name} was sent`);
  }
  const drops = SIGNALS.length * KEY_IDS.length;
  await eventually(
    'every Signal dropped, one line each',
    () =>
      (fixture.worker.output().match(/llmLimiter: dropped a \w+ signal: its payload cannot be decrypted/g)?.length ??
        0) >= drops || undefined,
    60_000,
  );

  // It still grants leases: another run's decision gets one.
  assert.equal((await fixture.run([final('after')])).result.stop_reason, 'success');
  const events = (await limiter.fetchHistory()).events ?? [];
  assert.deepEqual(
    {
      failedWorkflowTasks: events.filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED).length,
      granted: (await limiter.query(limiterQuery)).granted.granted,
    },
    { failedWorkflowTasks: 0, granted: granted + 1 },
  );
});
