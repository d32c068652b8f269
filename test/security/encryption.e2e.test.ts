// Encrypted histories, proven against the real dev server with real worker processes: what a
// reader of the raw history (database, Web UI without the codec) sees, what a client with the
// keys sees, key rotation, the cancelled-run memo, and secrets that must never be written.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { Reply } from '../../offline-model/scripted-llm-server';
import { final, tool } from '../../offline-model/scripted-replies';
import { cancelRun, runResult, startRun } from '../../client/agent-client';
import { EncryptionCodec, ENCRYPTED_ENCODING, KEY_ID_METADATA } from '../../runtime/codec/encryption-codec';
import { keyringFromEnv } from '../../runtime/codec/keyring';
import { agentInput, connectClient, REFUND_GOAL, uniqueId } from '../helpers/harness';
import { agentFixture } from '../helpers/agent-fixture';
import type { WorkerProcess } from '../../local-servers/worker-process';
import { codecEnv, newKey, newToken, withoutCodec } from '../helpers/codec';
import { allPayloads, allText, metadataText, scheduledActivityTypes } from '../helpers/history-scan';

const REFUND: Reply[] = [
  tool('get_user_profile', { user_id: 42 }),
  tool('get_user_billing', { user_id: 42 }),
  tool('search_policy', { query: 'refund policy' }),
  final('Yes: USD 49.00, within 14 days.'),
];
// Plaintext that must not be readable in a raw history: observation data, the goal, the answer.
const PLAINTEXT = [
  'Anna',
  'pro_monthly',
  'refundable within 14 days',
  'Can I get a refund now',
  'USD 49.00, within 14 days',
];

const K1 = newKey();
const K2 = newKey();
const API_KEY = `sk-test-${newToken()}`;
const CODEC_TOKEN = newToken();
const beforeRotation = codecEnv({ k1: K1 }, 'k1');
const afterRotation = codecEnv({ k1: K1, k2: K2 }, 'k2');
const NO_CODEC = { AGENT_CODEC_KEYS: '', AGENT_CODEC_KEY_FILE: '', AGENT_CODEC_ACTIVE_KEY_ID: '' };

const fixture = agentFixture({
  queue: 'enc',
  worker: false,
  clientEnv: { ...withoutCodec(), ...afterRotation },
  setup: async () => {
    raw = await connectClient(fixture.env, withoutCodec());
    const oldClient = await connectClient(fixture.env, { ...withoutCodec(), ...beforeRotation });
    runs.old = uniqueId('enc-old');
    runs.cancelled = uniqueId('enc-cancel');
    runs.secret = uniqueId('enc-secret');
    runs.inflight = uniqueId('enc-inflight');
    runs.new = uniqueId('enc-new');

    // Before rotation: a worker (and client) with k1 only.
    const first = await worker(beforeRotation);
    await run(runs.old, REFUND, oldClient);

    // A run cancelled mid-decide leaves its partial result in a memo.
    fixture.llm.script(runs.cancelled, [tool('get_user_profile', { user_id: 42 }), { hang: true }]);
    const cancelled = await startRun(oldClient, fixture.env, agentInput(), runs.cancelled);
    await fixture.llm.waitFor((r) => r.workflowId === runs.cancelled && r.step === 2, 20_000);
    await cancelRun(oldClient, runs.cancelled);
    await runResult(cancelled);

    // An LLM whose error bodies echo the API key back (as some proxies and providers do).
    await run(
      runs.secret,
      [
        {
          status: 500,
          body: {
            error: {
              message: `upstream failed for Authorization: Bearer ${API_KEY}`,
              type: 'server_error',
              code: null,
            },
          },
        },
        {
          status: 401,
          body: {
            error: {
              message: `Incorrect API key provided: ${API_KEY}`,
              type: 'invalid_request_error',
              code: 'invalid_api_key',
            },
          },
        },
      ],
      oldClient,
    );

    // A run in flight during the rotation: one step under k1, then its worker dies mid-decide.
    fixture.llm.script(runs.inflight, [REFUND[0]!, { hang: true }, ...REFUND.slice(1)]);
    await startRun(oldClient, fixture.env, agentInput({ budget: { max_seconds: 300 } }), runs.inflight);
    await fixture.llm.waitFor((r) => r.workflowId === runs.inflight && r.step === 2, 20_000);
    await first.kill();
    await oldClient.connection.close();

    // Rotation: the new worker still has k1 (to replay and read old payloads) but encrypts with k2.
    await worker(afterRotation);
    await runResult(fixture.client.workflow.getHandle(runs.inflight));
    await run(runs.new, REFUND);
  },
});
let raw: Client; // no codec: what the database and a codec-less UI show; fixture.client has k1 + k2, as the CLI
const workers: WorkerProcess[] = [];
const runs: Record<string, string> = {};

function worker(codec: Record<string, string>): Promise<WorkerProcess> {
  const w = fixture.startWorker({
    OPENAI_API_KEY: API_KEY,
    OPENAI_TIMEOUT_SECONDS: '30',
    AGENT_CODEC_TOKEN: CODEC_TOKEN,
    ...NO_CODEC,
    ...codec,
  });
  workers.push(w);
  return w.ready.then(() => w);
}

async function run(id: string, replies: Reply[], client = fixture.client) {
  fixture.llm.script(id, replies);
  return runResult(await startRun(client, fixture.env, agentInput({ llm_max_attempts: 2 }), id));
}

const history = async (id: string) => (await raw.workflow.getHandle(id).fetchHistory()).events ?? [];

/** Payloads that go through the data converter; search attributes and SDK patch markers do not. */
// Written by the SDK's core, not the data converter: patch ids, and a local activity's marker data
// (its sequence number, attempt and type, readable as a normal activity's type is; its result is encrypted).
const isCodecPayload = (at: string) =>
  !at.includes('searchAttributes.indexedFields') &&
  !at.includes('details.patch-data') &&
  !at.includes('details.data.payloads');
const codecPayloads = (events: unknown) => allPayloads(events).filter((p) => isCodecPayload(p.at));

after(async () => {
  await raw?.connection.close();
});

describe('the raw history, read without the codec', () => {
  it('contains no plaintext of the goal, the observations or the answer', async () => {
    const text = allText(await history(runs.old)).join('\n');
    for (const secret of PLAINTEXT) assert.ok(!text.includes(secret), `"${secret}" is readable in the raw history`);
  });

  it('the same scan finds them once the payloads are decoded in place (the check is live)', async () => {
    const events = await history(runs.old);
    const codec = new EncryptionCodec(keyringFromEnv(afterRotation)!);
    for (const { payload } of allPayloads(events)) Object.assign(payload, (await codec.decode([payload]))[0]);
    const text = allText(events).join('\n');
    for (const secret of PLAINTEXT)
      assert.ok(text.includes(secret), `"${secret}" should be found in the decoded history`);
  });

  it('every payload is binary/encrypted with a key id: inputs, results, activity summaries', async () => {
    const payloads = codecPayloads(await history(runs.old));
    assert.ok(payloads.length >= 15, `found only ${payloads.length} payloads`);
    const notEncrypted = payloads
      .filter((p) => metadataText(p.payload, 'encoding') !== ENCRYPTED_ENCODING)
      .map((p) => p.at);
    assert.deepEqual(notEncrypted, []);
    assert.ok(
      payloads.some((p) => p.at.includes('userMetadata.summary')),
      'activity summaries are payloads too, and encrypted',
    );
    assert.deepEqual([...new Set(payloads.map((p) => metadataText(p.payload, KEY_ID_METADATA)))], ['k1']);
  });

  it('what stays readable: search attributes, patch ids, workflow id and type, activity types and ids', async () => {
    const events = await history(runs.old);
    // The server indexes search attributes, so no codec touches them; patch markers carry the patch id.
    const plain = allPayloads(events).filter((p) => !isCodecPayload(p.at));
    assert.ok(plain.some((p) => p.at.endsWith('indexedFields.AgentPrincipal')));
    // The goal is the user's text: no AgentGoal column when payloads are encrypted.
    assert.ok(!plain.some((p) => p.at.endsWith('indexedFields.AgentGoal')));
    for (const p of plain) assert.notEqual(metadataText(p.payload, 'encoding'), ENCRYPTED_ENCODING, p.at);
    const principal = plain.find((p) => p.at.endsWith('indexedFields.AgentPrincipal'))!.payload;
    assert.equal(Buffer.from(principal.data!).toString(), '"42"');
    const started = events[0]!.workflowExecutionStartedEventAttributes!;
    assert.equal(started.workflowType!.name, 'reactAgent');
    const activities = events
      .filter((e) => e.activityTaskScheduledEventAttributes)
      .map((e) => e.activityTaskScheduledEventAttributes!);
    assert.deepEqual(
      activities.map((a) => a.activityType!.name),
      ['decide', 'decide', 'decide', 'search_policy', 'decide'],
    );
    assert.equal(activities[3]!.activityId, '3-search_policy');
    // The lookups by key ran as local activities: their types are readable in their markers, their results are not.
    assert.deepEqual(scheduledActivityTypes(events), [
      'decide',
      'get_user_profile',
      'decide',
      'get_user_billing',
      'decide',
      'search_policy',
      'decide',
    ]);
    assert.ok(
      codecPayloads(events).some((p) => p.at.endsWith('details.result.payloads.0')),
      'a local activity result is a codec payload (encrypted: the test above)',
    );
  });
});

describe('with the codec', () => {
  it('a client with the key reads the result, observations included', async () => {
    const result = await runResult(fixture.client.workflow.getHandle(runs.old));
    assert.equal(result.stop_reason, 'success');
    assert.equal(result.answer, 'Yes: USD 49.00, within 14 days.');
    assert.deepEqual(result.history[0]!.observation.data, {
      user: { id: 42, name: 'Anna', country: 'US', tier: 'pro' },
    });
    const input = await fixture.client.workflow.getHandle(runs.old).describe();
    assert.equal(input.type, 'reactAgent');
  });

  it('every payload of the raw history decodes with the codec', async () => {
    const codec = new EncryptionCodec(keyringFromEnv(afterRotation)!);
    const payloads = allPayloads(await history(runs.old)).map((p) => p.payload);
    const decoded = await codec.decode(payloads);
    const values = decoded.map((p) => defaultPayloadConverter.fromPayload(p));
    const text = JSON.stringify(values);
    for (const secret of PLAINTEXT) assert.ok(text.includes(secret), `"${secret}" decodes`);
    assert.ok(
      values.some((v) => typeof v === 'string' && v.startsWith('step 1: decide · left:')),
      'the activity summary decodes',
    );
    assert.ok(text.includes(REFUND_GOAL));
  });

  it("the cancelled run's memo is encrypted, and runResult still rebuilds the partial result through the codec", async () => {
    // Even describe() needs the codec now (it decodes the memo), so read the raw service response.
    await assert.rejects(
      raw.workflow.getHandle(runs.cancelled).describe(),
      /encrypted \(key "k1"\) but no codec key is configured/,
    );
    const description = await raw.workflowService.describeWorkflowExecution({
      namespace: fixture.env.namespace,
      execution: { workflowId: runs.cancelled },
    });
    assert.equal(description.workflowExecutionInfo!.status, 4); // WORKFLOW_EXECUTION_STATUS_CANCELED
    const memo = description.workflowExecutionInfo!.memo!.fields!;
    const entry = memo.agent_result!;
    assert.equal(metadataText(entry, 'encoding'), ENCRYPTED_ENCODING);
    assert.ok(!allText(memo).join('').includes('Anna'));
    const result = await runResult(fixture.client.workflow.getHandle(runs.cancelled));
    assert.equal(result.stop_reason, 'cancelled');
    assert.deepEqual(
      result.trace.map((t) => t.tool),
      ['get_user_profile'],
    );
    assert.equal((result.history[0]!.observation.data as { user: { name: string } }).user.name, 'Anna');
  });
});

describe('key rotation', () => {
  const ids = async (id: string) =>
    [...new Set(codecPayloads(await history(id)).map((p) => metadataText(p.payload, KEY_ID_METADATA)))].sort();

  it('new runs use the new key id; old runs keep theirs', async () => {
    assert.deepEqual(await ids(runs.new), ['k2']);
    assert.deepEqual(await ids(runs.old), ['k1']);
  });

  it('a run in flight across the rotation: the new worker replays k1 payloads and continues under k2', async () => {
    const result = await runResult(fixture.client.workflow.getHandle(runs.inflight));
    assert.equal(result.stop_reason, 'success');
    assert.deepEqual(
      result.trace.map((t) => t.tool),
      ['get_user_profile', 'get_user_billing', 'search_policy'],
    );
    assert.deepEqual(await ids(runs.inflight), ['k1', 'k2']);
  });

  it('a client with both keys reads old and new runs', async () => {
    const [oldResult, newResult] = await Promise.all([
      runResult(fixture.client.workflow.getHandle(runs.old)),
      runResult(fixture.client.workflow.getHandle(runs.new)),
    ]);
    assert.equal(oldResult.stop_reason, 'success');
    assert.equal(newResult.stop_reason, 'success');
    assert.equal(newResult.history[1]!.observation.source, 'billing-service');
  });

  it('dropping the old key makes old runs unreadable, with an error naming the missing key id', async () => {
    const onlyNew = await connectClient(fixture.env, { ...withoutCodec(), ...codecEnv({ k2: K2 }, 'k2') });
    try {
      assert.equal((await runResult(onlyNew.workflow.getHandle(runs.new))).stop_reason, 'success');
      await assert.rejects(runResult(onlyNew.workflow.getHandle(runs.old)), /key "k1"/);
    } finally {
      await onlyNew.connection.close();
    }
  });
});

describe('secrets stay out of history, errors and logs', () => {
  it('an LLM error that echoes the API key is scrubbed before it becomes a failure', async () => {
    const result = await runResult(fixture.client.workflow.getHandle(runs.secret));
    assert.equal(result.stop_reason, 'llm_error');

    const events = await history(runs.secret);
    const codec = new EncryptionCodec(keyringFromEnv(afterRotation)!);
    const decoded = await codec.decode(allPayloads(events).map((p) => p.payload));
    const everything = [
      ...allText(events),
      ...decoded.map((p) => JSON.stringify(defaultPayloadConverter.fromPayload(p))),
    ].join('\n');
    // Failure messages are encoded (they are payloads now); decoded, they show the scrubbed text.
    // (Only the last attempt's failure is an event; the 500 before it shows up in the worker log.)
    const failures = events
      .filter((e) => e.activityTaskFailedEventAttributes)
      .map((e) => e.activityTaskFailedEventAttributes!.failure!);
    assert.equal(failures.length, 1);
    assert.equal(failures[0]!.message, 'Encoded failure');
    assert.match(everything, /LLM rejected the request with HTTP 401: .*\[secret\]/);
    for (const secret of [API_KEY, K1, K2, CODEC_TOKEN])
      assert.ok(!everything.includes(secret), 'a secret reached the history');
  });

  it("no secret appears in any worker's log", () => {
    const logs = workers.map((w) => w.output()).join('\n');
    assert.match(logs, /LLM answered HTTP 500: .*Bearer \[secret\]/, 'the retried attempt was logged, scrubbed');
    assert.match(logs, /payload encryption on \(active key id k1/);
    assert.match(logs, /payload encryption on \(active key id k2/);
    for (const secret of [API_KEY, K1, K2, CODEC_TOKEN])
      assert.ok(!logs.includes(secret), 'a secret reached a worker log');
  });

  it('the model never saw the sensitive field, and the worker log shows it redacted', async () => {
    const sent = fixture.llm
      .requests(runs.old)
      .map((r) => JSON.stringify(r.body))
      .join('\n');
    assert.ok(sent.includes('\\"tier\\":\\"pro\\"'), 'the profile reached the model');
    assert.ok(!sent.includes('Anna'), 'the name did not');
    assert.ok(sent.includes('[redacted]'));
    const logs = workers.map((w) => w.output()).join('\n');
    assert.match(logs, /tool observation: get_user_profile/);
    assert.ok(!logs.includes('Anna'));
  });
});
