// The operator's CLI on a real server, with a real worker: `cancel --stuck` cancels exactly the
// runs that match (running reactAgent runs started before the cutoff) and none other, in a mix
// of fast, stuck, young and non-agent runs; `list` filters on the search attributes; `watch`
// follows a run live until it ends.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Reply } from '../../offline-model/scripted-llm-server';
import { escalate, final, message, tool } from '../../offline-model/scripted-replies';
import { runResult, runState, startRun } from '../../client/agent-client';
import type { AgentInput } from '../../common/types';
import { agentInput, eventually, uniqueId } from '../helpers/harness';
import { agentFixture } from '../helpers/agent-fixture';
import { runCli } from '../helpers/cli';

const fixture = agentFixture({ queue: 'ops', workerEnv: { OPENAI_TIMEOUT_SECONDS: '300' } });

async function start(prefix: string, replies: Reply[], overrides: Partial<AgentInput> = {}) {
  const id = uniqueId(prefix);
  fixture.llm.script(id, replies);
  const handle = await startRun(fixture.client, fixture.env, agentInput(overrides), id);
  return { id, handle };
}

async function statusOf(id: string): Promise<string> {
  return (await fixture.client.workflow.getHandle(id).describe()).status.name;
}

async function visible(query: string, ids: string[]): Promise<void> {
  await eventually(`${ids.join(', ')} visible to "${query}"`, async () => {
    const seen = new Set<string>();
    for await (const info of fixture.client.workflow.list({ query })) seen.add(info.workflowId);
    return ids.every((id) => seen.has(id)) ? true : undefined;
  });
}

const OLDER_THAN = '6s';
const OLDER_THAN_MS = 6_000;

describe('agent cancel --stuck', () => {
  it('cancels exactly the running agent runs older than the cutoff, after a count and a confirmation', async () => {
    // Fast runs: finished long before the cutoff matters.
    const fast = [await start('fast', [final('done')]), await start('fast', [final('done')])];
    for (const run of fast) assert.equal((await runResult(run.handle)).stop_reason, 'success');

    // Stuck runs: each hangs in its second LLM decision.
    const stuck = [
      await start('stuck', [tool('get_user_profile', { user_id: 42 }), { hang: true }], {
        budget: { max_seconds: 600 },
      }),
      await start('stuck', [tool('get_user_profile', { user_id: 42 }), { hang: true }], {
        budget: { max_seconds: 600 },
      }),
    ];
    const stuckStartedAt = Date.now();
    for (const run of stuck) await fixture.llm.waitFor((r) => r.workflowId === run.id && r.step === 2, 20_000);

    // Not an agent run: old and running too, but another workflow type (nobody polls its queue).
    const otherId = uniqueId('other-type');
    const other = await fixture.client.workflow.start('notAnAgent', {
      taskQueue: uniqueId('nobody'),
      workflowId: otherId,
      args: [],
    });

    await visible(`ExecutionStatus = 'Running'`, [...stuck.map((r) => r.id), otherId]);
    while (Date.now() < stuckStartedAt + OLDER_THAN_MS + 1_000) await new Promise((r) => setTimeout(r, 100));

    // No terminal to confirm on (stdin is not a TTY): refuse, cancel nothing.
    const refused = await runCli(fixture.env, ['cancel', '--stuck', '--older-than', OLDER_THAN]);
    assert.equal(refused.code, 1, refused.stdout + refused.stderr);
    assert.match(
      refused.stderr,
      /refusing to cancel \d+ run\(s\) without confirmation: stdin is not a terminal; re-run with --yes/,
    );
    for (const run of stuck) assert.equal(await statusOf(run.id), 'RUNNING');

    // --dry-run: the count and the list, nothing cancelled.
    const dry = await runCli(fixture.env, ['cancel', '--stuck', '--older-than', OLDER_THAN, '--dry-run']);
    assert.equal(dry.code, 0, dry.stderr);
    for (const run of stuck) assert.match(dry.stdout, new RegExp(run.id));
    for (const id of [...fast.map((r) => r.id), otherId]) assert.doesNotMatch(dry.stdout, new RegExp(id));
    assert.match(dry.stdout, /dry run: would cancel \d+ run\(s\)/);
    for (const run of stuck) assert.equal(await statusOf(run.id), 'RUNNING');

    // Young: running, but started after the cutoff the next command computes.
    const young = await start('young', [{ hang: true }], { budget: { max_seconds: 600 } });
    await fixture.llm.waitFor((r) => r.workflowId === young.id && r.step === 1, 20_000);

    const commandAt = Date.now();
    const done = await runCli(fixture.env, [
      'cancel',
      '--stuck',
      '--older-than',
      OLDER_THAN,
      '--yes',
      '--reason',
      'stuck in the operator test',
    ]);
    assert.equal(done.code, 0, done.stdout + done.stderr);
    const countMatch = /^(\d+) running agent run\(s\) whose chain started more than 6s ago/m.exec(done.stdout);
    assert.ok(countMatch, done.stdout);
    const reported = [...done.stdout.matchAll(/^ {2}(\S+) \((\S+)\): cancel requested$/gm)].map((m) => ({
      id: m[1]!,
      runId: m[2]!,
    }));
    assert.equal(reported.length, Number(countMatch[1]), 'every counted run was cancelled');
    assert.match(done.stdout, new RegExp(`cancel requested for ${reported.length} of ${reported.length} run\\(s\\)`));

    // Exactly the matching runs: ours that are stuck, and (if another test left any) only
    // reactAgent runs that were running and started before the cutoff.
    const reportedIds = reported.map((r) => r.id);
    for (const run of stuck) assert.ok(reportedIds.includes(run.id), `${run.id} cancelled`);
    for (const id of [young.id, otherId, ...fast.map((r) => r.id)])
      assert.ok(!reportedIds.includes(id), `${id} left alone`);
    for (const r of reported) {
      const d = await fixture.client.workflow.getHandle(r.id, r.runId).describe();
      assert.equal(d.type, 'reactAgent');
      assert.ok(d.startTime.getTime() < commandAt - OLDER_THAN_MS + 1_000, `${r.id} started before the cutoff`);
    }

    // The stuck runs end Canceled, each with the reason in its own history.
    for (const run of stuck) {
      const result = await runResult(run.handle);
      assert.equal(result.stop_reason, 'cancelled');
      assert.equal(await statusOf(run.id), 'CANCELLED');
      const events = (await run.handle.fetchHistory()).events ?? [];
      const request = events.find((e) => e.workflowExecutionCancelRequestedEventAttributes)!;
      assert.equal(request.workflowExecutionCancelRequestedEventAttributes!.cause, 'stuck in the operator test');
    }
    // The others are untouched.
    assert.equal(await statusOf(young.id), 'RUNNING');
    assert.equal(await statusOf(otherId), 'RUNNING');
    for (const run of fast) assert.equal(await statusOf(run.id), 'COMPLETED');

    // Nothing of ours is left to match a second pass.
    const again = await runCli(fixture.env, ['cancel', '--stuck', '--older-than', '1h', '--dry-run']);
    assert.equal(again.code, 0);
    assert.match(again.stdout, /nothing to cancel|would cancel/);
    for (const run of stuck) assert.doesNotMatch(again.stdout, new RegExp(run.id));

    // Clean up what the test left running.
    assert.equal((await runCli(fixture.env, ['cancel', young.id])).code, 0);
    await other.terminate('operator test cleanup');
  });

  it('leaves runs waiting for a person alone (unless --include-waiting) and still cancels the stuck ones', async () => {
    // Waiting for a person: an escalation awaiting an answer, a conversation awaiting the customer.
    const escalated = await start('wait-appr', [escalate('the customer disputes a charge')]);
    const chat = await start('wait-chat', [message('Hello, how can I help?')], { conversation: {} });
    // Stuck: one hangs in its LLM decision; one sits on a task queue no worker polls (it cannot answer).
    const hung = await start('stuck-llm', [{ hang: true }], { budget: { max_seconds: 600 } });
    const orphanId = uniqueId('stuck-noworker');
    const orphan = await startRun(
      fixture.client,
      { ...fixture.env, taskQueue: uniqueId('nobody') },
      agentInput(),
      orphanId,
    );
    const startedAt = Date.now();
    for (const [run, phase] of [
      [escalated, 'awaiting_approval'],
      [chat, 'awaiting_customer'],
    ] as const) {
      await eventually(`${run.id} ${phase}`, async () =>
        (await runState(run.handle)).phase === phase ? true : undefined,
      );
    }
    await fixture.llm.waitFor((r) => r.workflowId === hung.id && r.step === 1, 20_000);
    await visible(`ExecutionStatus = 'Running'`, [escalated.id, chat.id, hung.id, orphanId]);
    while (Date.now() < startedAt + OLDER_THAN_MS + 1_000) await new Promise((r) => setTimeout(r, 100));

    const dry = await runCli(fixture.env, ['cancel', '--stuck', '--older-than', OLDER_THAN, '--dry-run', '-o', 'json']);
    assert.equal(dry.code, 0, dry.stderr);
    const doc = JSON.parse(dry.stdout) as {
      runs: Array<{ workflow_id: string }>;
      skipped_waiting: Array<{ workflow_id: string; outcome: string; waits_for: string }>;
    };
    const wouldCancel = doc.runs.map((r) => r.workflow_id);
    const skipped = new Map(doc.skipped_waiting.map((r) => [r.workflow_id, r]));
    for (const id of [hung.id, orphanId]) assert.ok(wouldCancel.includes(id), `${id} would be cancelled`);
    for (const id of [escalated.id, chat.id]) assert.ok(!wouldCancel.includes(id), `${id} is not stuck`);
    assert.match(skipped.get(escalated.id)?.waits_for ?? '', /a person's answer to the escalation/);
    assert.match(skipped.get(chat.id)?.waits_for ?? '', /the customer's reply/);
    assert.equal(skipped.get(chat.id)?.outcome, 'skipped_waiting');

    const done = await runCli(fixture.env, ['cancel', '--stuck', '--older-than', OLDER_THAN, '--yes', '--no-wait']);
    assert.equal(done.code, 0, done.stdout + done.stderr);
    assert.match(
      done.stdout,
      /old run\(s\) wait for a person, not stuck; left alone \(--include-waiting cancels them too\)/,
    );
    assert.ok(done.stdout.includes(`  ${escalated.id}: waits for a person's answer to the escalation`), done.stdout);
    assert.equal((await runResult(hung.handle)).stop_reason, 'cancelled');
    await eventually('the orphan run cancel-requested', async () => {
      const events = (await orphan.fetchHistory()).events ?? [];
      return events.some((e) => e.workflowExecutionCancelRequestedEventAttributes) ? true : undefined;
    });
    for (const run of [escalated, chat]) assert.equal(await statusOf(run.id), 'RUNNING');

    // Asked to: the waiting runs go too.
    const all = await runCli(fixture.env, [
      'cancel',
      '--stuck',
      '--older-than',
      OLDER_THAN,
      '--include-waiting',
      '--yes',
      '--no-wait',
    ]);
    assert.equal(all.code, 0, all.stdout + all.stderr);
    for (const run of [escalated, chat]) {
      assert.match(all.stdout, new RegExp(`^ {2}${run.id} \\(\\S+\\): cancel requested$`, 'm'));
      assert.equal((await runResult(run.handle)).stop_reason, 'cancelled');
    }
    await orphan.terminate('operator test cleanup');
  });

  it('rejects incomplete or contradictory flags with a usage error', async () => {
    for (const args of [
      ['cancel', '--stuck'],
      ['cancel', '--stuck', '--older-than', 'soon'],
      ['cancel', 'some-id', '--stuck', '--older-than', '10m'],
      ['cancel', 'some-id', '--yes'],
      ['cancel', 'some-id', '--include-waiting'],
      ['cancel'],
    ]) {
      const r = await runCli(fixture.env, args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stderr.trim().split('\n').length, 1);
    }
  });
});

describe('agent list with filters', () => {
  it('filters by agent status, stop reason (family or exact) and age, and prints the search attributes', async () => {
    const ok = await start('list-ok', [tool('get_user_profile', { user_id: 42 }), final('done')]);
    const denied = await start('list-denied', [tool('search_policy', { query: 'refund' })], {
      allow: ['get_user_profile'],
    });
    // Another user's profile: the principal policy denies it, and the run records the rule.
    const policyDenied = await start('list-policy', [tool('get_user_profile', { user_id: 43 })]);
    const running = await start('list-running', [{ hang: true }], { budget: { max_seconds: 600 } });
    assert.equal((await runResult(ok.handle)).stop_reason, 'success');
    assert.equal((await runResult(denied.handle)).stop_reason, 'tool_denied:search_policy');
    assert.equal((await runResult(policyDenied.handle)).stop_reason, 'policy_denied:other_user');
    await fixture.llm.waitFor((r) => r.workflowId === running.id && r.step === 1, 20_000);

    const listed = async (args: string[]) => {
      const r = await runCli(fixture.env, ['list', '-o', 'json', '--limit', '1000', ...args]);
      assert.equal(r.code, 0, r.stderr);
      return JSON.parse(r.stdout) as Array<Record<string, unknown>>;
    };
    const find = (rows: Array<Record<string, unknown>>, id: string) => rows.find((r) => r.workflow_id === id);

    const stoppedDenied = await eventually('the denied run listed', async () => {
      const rows = await listed(['--status', 'stopped', '--stop-reason', 'tool_denied']);
      return find(rows, denied.id) ? rows : undefined;
    });
    assert.deepEqual(
      { ...find(stoppedDenied, denied.id), run_id: undefined, start_time: undefined, close_time: undefined },
      {
        workflow_id: denied.id,
        run_id: undefined,
        status: 'COMPLETED',
        start_time: undefined,
        close_time: undefined,
        agent_status: 'stopped',
        stop_reason: 'tool_denied:search_policy',
        step: 1,
        tool_calls: 0,
        principal: '42',
        effects: null,
      },
    );
    assert.equal(find(stoppedDenied, ok.id), undefined);
    assert.ok(
      stoppedDenied.every((r) => r.agent_status === 'stopped' && String(r.stop_reason).startsWith('tool_denied:')),
    );

    const exact = await listed(['--stop-reason', 'tool_denied:search_policy']);
    assert.ok(find(exact, denied.id));
    // A parametrised reason named without its parameter matches every rule of it.
    const byPolicy = await listed(['--stop-reason', 'policy_denied']);
    assert.equal(find(byPolicy, policyDenied.id)?.stop_reason, 'policy_denied:other_user');
    assert.equal(find(byPolicy, denied.id), undefined);
    assert.ok(find(await listed(['--stop-reason', 'policy_denied:other_user']), policyDenied.id));
    const okRows = await listed(['--status', 'ok']);
    assert.equal(find(okRows, ok.id)?.stop_reason, 'success');
    assert.equal(find(okRows, ok.id)?.tool_calls, 1);
    assert.equal(find(okRows, denied.id), undefined);

    const runningRows = await listed(['--status', 'running']);
    assert.equal(find(runningRows, running.id)?.agent_status, 'running');
    assert.equal(find(runningRows, ok.id), undefined);
    // Started moments ago: not "older than an hour".
    assert.equal(find(await listed(['--status', 'running', '--older-than', '1h']), running.id), undefined);

    const table = await runCli(fixture.env, ['list', '--status', 'stopped,ok', '--limit', '1000']);
    assert.match(table.stdout, /WORKFLOW ID\s+TEMPORAL\s+AGENT\s+STOP REASON\s+STEP\s+TOOLS\s+PRINCIPAL/);
    assert.match(
      table.stdout,
      new RegExp(`${denied.id}\\s+COMPLETED\\s+stopped\\s+tool_denied:search_policy\\s+1\\s+0\\s+42`),
    );

    const query = await runCli(fixture.env, [
      'list',
      '--query',
      '--status',
      'running',
      '--stop-reason',
      'loop_detected',
    ]);
    assert.equal(
      query.stdout.trim(),
      "WorkflowType = 'reactAgent' AND ExecutionStatus = 'Running' AND AgentStopReason = 'loop_detected'",
    );

    const bad = await runCli(fixture.env, ['list', '--status', 'sleeping']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /unknown status "sleeping"/);
    const injection = await runCli(fixture.env, ['list', '--stop-reason', "x' OR 'a'='a"]);
    assert.equal(injection.code, 2);

    assert.equal((await runCli(fixture.env, ['cancel', running.id])).code, 0);
  });
});

describe('agent watch', () => {
  it('follows a run live, step by step, until it ends, then prints the result', async () => {
    const run = await start('watch', [
      tool('get_user_profile', { user_id: 42 }, { delayMs: 800 }),
      tool('get_user_billing', { user_id: 42 }, { delayMs: 800 }),
      final('Refund: yes.', { delayMs: 800 }),
    ]);
    const watched = await runCli(fixture.env, ['watch', run.id]);
    assert.equal(watched.code, 0, watched.stderr);
    const lines = watched.stdout.trim().split('\n');
    assert.match(lines[0]!, new RegExp(`^\\d\\d:\\d\\d:\\d\\d watching ${run.id} \\(RUNNING`));
    const body = lines.join('\n');
    // Phase lines only come from polling a live run.
    assert.match(body, /^\d\d:\d\d:\d\d step \d: deciding$/m);
    assert.match(body, /^\d\d:\d\d:\d\d step 1: get_user_profile \(feaa769a39ae\) ok$/m);
    assert.match(body, /^\d\d:\d\d:\d\d step 2: get_user_billing \(feaa769a39ae\) ok$/m);
    assert.ok(body.indexOf('step 1: get_user_profile') < body.indexOf('step 2: get_user_billing'));
    assert.match(body, /run ended\nresult: ok \(success\)\nanswer: Refund: yes\./);

    // Watching a run that has already ended prints its steps and result at once.
    const late = await runCli(fixture.env, ['watch', run.id]);
    assert.equal(late.code, 0);
    assert.match(late.stdout, /watching .* \(COMPLETED/);
    assert.match(late.stdout, /step 2: get_user_billing \(feaa769a39ae\) ok/);
    assert.match(late.stdout, /result: ok \(success\)/);

    const missing = await runCli(fixture.env, ['watch', uniqueId('nope')]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no run with id/);
  });
});

/** Every key of a JSON value, however deep. */
function keysOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(keysOf);
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) => [k, ...keysOf(v)]);
}

function assertSnakeCase(value: unknown, what: string): void {
  const camel = keysOf(value).filter((k) => /[A-Z]/.test(k));
  assert.deepEqual(camel, [], `${what}: snake_case keys only`);
}

describe('machine output (-o json|jsonl) and exit codes', () => {
  it('watch -o jsonl: a line per event, snake_case, then the result; -o json: the result alone', async () => {
    const run = await start('watch-jsonl', [
      tool('get_user_profile', { user_id: 42 }, { delayMs: 500 }),
      final('Refund: yes.', { delayMs: 500 }),
    ]);
    const watched = await runCli(fixture.env, ['watch', run.id, '-o', 'jsonl']);
    assert.equal(watched.code, 0, watched.stderr);
    assert.equal(watched.stderr, '');
    const events = watched.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(events[0]!.type, 'watching');
    assert.equal(events[0]!.workflow_id, run.id);
    const step = events.find((e) => e.type === 'step');
    assert.deepEqual(
      { tool: step?.tool, args_hash: step?.args_hash, ok: step?.ok },
      { tool: 'get_user_profile', args_hash: 'feaa769a39ae', ok: true },
    );
    const last = events.at(-1)!;
    assert.equal(last.type, 'result');
    assert.equal((last.result as { stop_reason: string }).stop_reason, 'success');
    for (const e of events) assertSnakeCase(e, `watch -o jsonl line ${e.type}`);

    const json = await runCli(fixture.env, ['watch', run.id, '-o', 'json']);
    assert.equal(json.code, 0, json.stderr);
    assert.equal((JSON.parse(json.stdout) as { answer: string }).answer, 'Refund: yes.');
  });

  it('run --wait and result exit 4 for a run stopped on a budget; cancel -o json, then result exits 5', async () => {
    const id = uniqueId('budget');
    fixture.llm.script(id, [tool('get_user_profile', { user_id: 42 }), tool('get_user_billing', { user_id: 42 })]);
    const ran = await runCli(fixture.env, [
      'run',
      'refund?',
      '--user',
      '42',
      '--id',
      id,
      '--max-steps',
      '1',
      '--wait',
      '-o',
      'json',
    ]);
    assert.equal(ran.code, 4, ran.stderr);
    assert.equal((JSON.parse(ran.stdout) as { stop_reason: string }).stop_reason, 'max_steps');
    const shown = await runCli(fixture.env, ['result', id]);
    assert.equal(shown.code, 4, shown.stderr);
    assert.match(shown.stdout, /result: stopped \(max_steps\)/);

    const hung = await start('cancel-json', [tool('get_user_profile', { user_id: 42 }), { hang: true }], {
      budget: { max_seconds: 600 },
    });
    await fixture.llm.waitFor((r) => r.workflowId === hung.id && r.step === 2, 20_000);
    const cancelled = await runCli(fixture.env, ['cancel', hung.id, '-o', 'json', '--reason', 'json test']);
    assert.equal(cancelled.code, 0, cancelled.stdout + cancelled.stderr);
    const doc = JSON.parse(cancelled.stdout) as {
      workflow_id: string;
      action: string;
      reason: string;
      still_running: boolean;
      ending: { status: string; stop_reason: string; result: { trace: unknown[] } };
    };
    assert.deepEqual(
      [doc.workflow_id, doc.action, doc.reason, doc.still_running, doc.ending.status, doc.ending.stop_reason],
      [hung.id, 'cancel_requested', 'json test', false, 'CANCELLED', 'cancelled'],
    );
    assert.equal(doc.ending.result.trace.length, 1);
    assertSnakeCase(doc, 'cancel -o json');
    assert.match(cancelled.stderr, /cancel requested for/, 'progress goes to stderr');

    const result = await runCli(fixture.env, ['result', hung.id, '-o', 'jsonl']);
    assert.equal(result.code, 5, result.stderr);
    assert.equal(
      (JSON.parse(result.stdout.trim().split('\n').at(-1)!) as { result: { stop_reason: string } }).result.stop_reason,
      'cancelled',
    );

    const quick = await start('cancel-jsonl', [tool('get_user_profile', { user_id: 42 }), { hang: true }], {
      budget: { max_seconds: 600 },
    });
    const noWait = await runCli(fixture.env, ['cancel', quick.id, '--no-wait', '-o', 'jsonl']);
    assert.equal(noWait.code, 0, noWait.stderr);
    const lines = noWait.stdout.trim().split('\n');
    assert.equal(lines.length, 1);
    assert.deepEqual(JSON.parse(lines[0]!), {
      workflow_id: quick.id,
      run_id: (await quick.handle.describe()).runId,
      reason: 'cancelled by operator',
      action: 'cancel_requested',
      ending: null,
      still_running: null,
    });
  });

  it('--address and --namespace win over TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE', async () => {
    const run = await start('flags', [final('done')]);
    await runResult(run.handle);
    const wrongEnv = { TEMPORAL_ADDRESS: '127.0.0.1:1', TEMPORAL_NAMESPACE: 'no-such-namespace' };
    const refused = await runCli(fixture.env, ['status', run.id], wrongEnv);
    assert.equal(refused.code, 1);
    assert.equal(
      refused.stderr.split('\n')[0],
      'agent: cannot reach Temporal at 127.0.0.1:1 (plain gRPC); check the address (--address, TEMPORAL_ADDRESS or the profile), that the server is up and reachable from here, and the TLS settings (TEMPORAL_TLS*, TEMPORAL_API_KEY)',
    );
    const byFlags = await runCli(
      fixture.env,
      ['--address', fixture.env.address, 'status', run.id, `--namespace=${fixture.env.namespace}`, '-o', 'json'],
      wrongEnv,
    );
    assert.equal(byFlags.code, 0, byFlags.stderr);
    assert.equal((JSON.parse(byFlags.stdout) as { workflow_id: string }).workflow_id, run.id);
    const wrongNamespace = await runCli(fixture.env, ['status', run.id, '--namespace', 'no-such-namespace']);
    assert.equal(wrongNamespace.code, 1);
    assert.match(wrongNamespace.stderr, /namespace "no-such-namespace" does not exist/);
  });
});
