// `npm run eval -- --suite tau2-retail` end to end, as CI runs it: the replay of every task of the
// shipped train file ends in the expected database (τ²'s hash) with no duplicate write, and the
// dumped end states say the same; a task whose ground truth the runtime must refuse (a write on
// another user's order) is reported as a database mismatch with exit code 1; a handful of tasks
// replayed again while workers are killed and hung and the server restarts as writes are released
// still match, with no duplicate write; a bad task file is refused in one line. The report's trial
// table (the scenario suite's) has every trial with its steps read from the history, and the metadata.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { parseRetailDb } from '../../domains/retail/db';
import { getDbHash } from '../../domains/retail/hash';
import { loadRetailDb } from '../../domains/retail/initial-db';
import { CONSENT_YES } from '../../eval/tau2/customer';
import { expectedState } from '../../eval/tau2/expected';
import { moveOf, REPLAY_FINAL_ANSWER } from '../../eval/tau2/replay-model';
import { planReplay } from '../../eval/tau2/replay-plan';
import { ScriptedLlmServer } from '../../offline-model/scripted-llm-server';
import type { RecordedRequest, Reply } from '../../offline-model/scripted-llm-server';
import { final, tool } from '../../offline-model/scripted-replies';
import type { Tau2Report } from '../../eval/tau2/report';
import { loadTasks } from '../../eval/tau2/task';
import type { Tau2Task } from '../../eval/tau2/task';
import { DIST, REPO_ROOT } from '../helpers/harness';

const TASKS_FILE = path.join(REPO_ROOT, 'domains', 'retail', 'data', 'tasks-train.json');
const tasks = loadTasks(TASKS_FILE);
const dirs: string[] = [];
const tempDir = (prefix: string) => {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
};
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function runSuite(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number | null; output: string; ms: number }> {
  const began = Date.now();
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, [path.join(DIST, 'eval', 'main.js'), '--suite', 'tau2-retail', ...args], {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    proc.stdout.on('data', (c: Buffer) => (output += c.toString()));
    proc.stderr.on('data', (c: Buffer) => (output += c.toString()));
    proc.once('exit', (code) => resolve({ code, output, ms: Date.now() - began }));
  });
}

const readReport = (out: string) => JSON.parse(readFileSync(path.join(out, 'report.json'), 'utf8')) as Tau2Report;

/**
 * What a failed replay needs for its diagnosis after the temporary folders are gone: the failed trials
 * (problems, answer, trajectory) in the message, and the whole report kept in test-artifacts/.
 */
function failedTrials(out: string): string {
  const file = path.join(out, 'report.json');
  if (!existsSync(file)) return '(no report.json)';
  const artifacts = path.join(REPO_ROOT, 'test-artifacts');
  mkdirSync(artifacts, { recursive: true });
  copyFileSync(file, path.join(artifacts, 'tau2-suite-failed-report.json'));
  const failed = readReport(out).trial_table.filter((row) => !row.passed);
  return `failed trials (report kept in test-artifacts/tau2-suite-failed-report.json):\n${JSON.stringify(failed, null, 1).slice(0, 8000)}`;
}

/** A task the runtime must refuse: authenticated as one user, it cancels another user's pending order. */
function foreignWriteTask(): Tau2Task {
  const base = tasks.find(
    (t) =>
      t.evaluation_criteria?.actions?.[0]?.name === 'find_user_id_by_name_zip' &&
      t.evaluation_criteria.actions.some((a) => a.name === 'cancel_pending_order'),
  )!;
  const db = loadRetailDb();
  const actions = base.evaluation_criteria!.actions!;
  const own = actions.find((a) => a.name === 'cancel_pending_order')!.arguments.order_id as string;
  const owner = db.orders[own]!.user_id;
  const foreign = Object.values(db.orders).find((o) => o.status === 'pending' && o.user_id !== owner)!;
  return {
    ...base,
    id: 'foreign-write',
    evaluation_criteria: {
      ...base.evaluation_criteria!,
      actions: actions.map((a) =>
        a.name === 'cancel_pending_order' ? { ...a, arguments: { ...a.arguments, order_id: foreign.order_id } } : a,
      ),
    },
  };
}

describe('npm run eval -- --suite tau2-retail', () => {
  it(`replays all ${tasks.length} train tasks to the expected database, with no duplicate write`, async () => {
    const out = tempDir('tau2-all-');
    const dump = tempDir('tau2-dump-');
    const { code, output, ms } = await runSuite(['--out', out, '--dump-state', dump]);
    assert.equal(code, 0, `${output.slice(-3000)}\n${code === 0 ? '' : failedTrials(out)}`);
    const report = readReport(out);
    const baseline = report.phases.baseline!;
    assert.equal(report.ok, true);
    assert.deepEqual(report.problems, []);
    assert.equal(baseline.tasks, tasks.length);
    assert.equal(baseline.db_match.count, tasks.length);
    assert.equal(baseline.duplicate_writes, 0);
    assert.equal(baseline.unreported_writes, 0);
    assert.equal(baseline.pass_hat_k['1'], 1);
    for (const t of report.trials) {
      assert.equal(t.applied_writes, t.gold_writes, `task ${t.task_id}: committed writes`);
      assert.ok(t.steps > 0, `task ${t.task_id}: steps`);
    }
    // The dumped end states are the runs' databases: each hashes to its task's expected state.
    assert.equal(readdirSync(dump).length, tasks.length);
    const written = tasks.find((t) => expectedState(t).writes > 1)!;
    const dumped = parseRetailDb(JSON.parse(readFileSync(path.join(dump, `${written.id}.json`), 'utf8')));
    assert.equal(getDbHash(dumped), expectedState(written).hash);
    const html = readFileSync(path.join(out, 'report.html'), 'utf8');
    assert.ok(html.includes('τ²-bench retail'));
    // Every trial is a row of the shared trial table, with its steps read from its history.
    assert.equal(report.trial_table.length, tasks.length);
    for (const row of report.trial_table) {
      assert.equal(row.passed, true, row.id);
      assert.ok(row.trajectory.length === row.steps, `${row.id}: ${row.trajectory.length} of ${row.steps} steps`);
      assert.equal(row.trajectory.at(-1)!.stop_reason, row.stop_reason, row.id);
      // The scripted model's token counts are made up: no dollar figure for them.
      assert.ok(row.cost_usd === null && row.tokens > 0, row.id);
      // The row opens onto the whole conversation: the customer's opening first, every call with its result.
      assert.equal(row.transcript[0]?.from, 'customer', row.id);
      const trial = report.trials.find((t) => t.workflow_id === row.workflow_id)!;
      assert.equal(row.transcript.filter((e) => e.from === 'tool').length, trial.tool_calls, row.id);
      assert.ok(html.includes(`<details class="transcript" id="${row.id.replace(/^trial-/, 'transcript-')}"`), row.id);
      assert.equal(row.url, null); // the suite's own dev server ended with it
      assert.ok(html.includes(`<details id="${row.id}"`), row.id);
    }
    assert.equal(report.metadata.suite, 'tau2-retail');
    assert.equal(report.metadata.base_url_kind, 'scripted');
    assert.match(report.metadata.prompt_version, /^[0-9a-f]{12}$/);
    assert.equal(report.metadata.server.own, true);
    assert.deepEqual(
      report.rates.find((r) => r.name === 'db_match'),
      { phase: 'baseline', name: 'db_match', value: 1, n: tasks.length, se: 0, better: 'higher' },
    );
    assert.equal(report.cost.none, 'scripted model');
    assert.equal(report.metadata.model, 'scripted model (offline-model/scripted-llm-server.ts)');
    assert.match(html, /<th>cost<\/th><td>none \(scripted model\)<\/td>/);
    console.log(
      `τ² retail replay of ${tasks.length} tasks: ${(baseline.wall_ms / 1000).toFixed(1)} s for the runs, ` +
        `${(ms / 1000).toFixed(1)} s for the whole command (dev server, workers, planning included)`,
    );
  });

  it('reports a task whose end state does not match as a failure, exit code 1', async () => {
    const dir = tempDir('tau2-bad-');
    const file = path.join(dir, 'tasks.json');
    const good = tasks.find((t) => (t.evaluation_criteria?.actions?.length ?? 0) > 0 && expectedState(t).writes > 0)!;
    writeFileSync(file, JSON.stringify([good, foreignWriteTask()]));
    const out = path.join(dir, 'out');
    const { code, output } = await runSuite(['--tasks', file, '--out', out]);
    assert.equal(code, 1, output.slice(-4000));
    const report = readReport(out);
    const byId = new Map(report.trials.map((t) => [t.task_id, t]));
    assert.equal(byId.get(good.id)!.db_match, true);
    const bad = byId.get('foreign-write')!;
    assert.equal(bad.db_match, false);
    assert.equal(bad.passed, false);
    assert.notEqual(bad.end_hash, bad.expected_hash);
    assert.match(report.problems.join('\n'), /1 trials whose database is not the expected one/);
    assert.match(output, /FAIL task foreign-write #1: DB MISMATCH/);
    const badRow = report.trial_table.find((r) => r.scenario === 'foreign-write')!;
    assert.equal(badRow.passed, false);
    assert.match(badRow.problems.join('\n'), /^end state [0-9a-f]+, expected [0-9a-f]+$/m);
    // The drill-down shows the write the runtime refused.
    assert.ok(
      badRow.trajectory.some(
        (s) => s.stop_reason === 'policy_denied:other_user' && s.summary.includes('cancel_pending_order'),
      ),
      JSON.stringify(badRow.trajectory),
    );
  });

  it('under chaos (workers killed and hung, the server restarted as writes are released) a handful of tasks still match, writing once', async () => {
    const out = tempDir('tau2-chaos-');
    const writing = tasks.filter((t) => expectedState(t).writes > 0).slice(0, 6);
    const { code, output } = await runSuite([
      '--task-ids',
      writing.map((t) => t.id).join(','),
      '--chaos',
      '--seed',
      '3',
      // Two at a time: the tasks' writes spread over the phase, and so do the faults they release.
      '--concurrency',
      '2',
      '--out',
      out,
    ]);
    assert.equal(code, 0, output.slice(-4000));
    const report = readReport(out);
    for (const phase of ['baseline', 'chaos'] as const) {
      const p = report.phases[phase]!;
      assert.equal(p.db_match.count, writing.length, phase);
      assert.equal(p.duplicate_writes, 0, phase);
      assert.equal(p.unreported_writes, 0, phase);
    }
    const kinds = new Set(report.phases.chaos!.chaos_events.map((e) => e.kind));
    assert.ok(kinds.size >= 2, `faults: ${[...kinds].join(', ')}`);
  });

  it('--mode live: the model is the agent and an LLM customer talks through say (both the scripted LLM here)', async () => {
    const chosen = tasks.filter((t) => expectedState(t).writes > 0).slice(0, 2);
    const byId = new Map(chosen.map((t) => [t.id, t]));
    // The "live" model: the agent's decisions replay the ground truth; the customer says yes when asked to confirm.
    const llm = await ScriptedLlmServer.start({
      defaultScript: (req: RecordedRequest): Reply => {
        const task = byId.get(/^tau2-[a-z0-9]+-baseline-(.+)-\d+$/.exec(req.workflowId ?? '')?.[1] ?? '');
        if (!task) return final('unknown run');
        if (req.idempotencyKey?.includes(':customer:')) {
          const last = (req.body as { messages: Array<{ role: string; content: string }> }).messages.at(-1)!;
          return { content: /confirm/i.test(last.content) ? CONSENT_YES : 'I need help with an order.' };
        }
        const move = moveOf(planReplay(task), req);
        return 'call' in move ? tool(move.call.name, move.call.args) : final(REPLAY_FINAL_ANSWER);
      },
    });
    try {
      const out = tempDir('tau2-live-');
      const env: NodeJS.ProcessEnv = { ...process.env, OPENAI_BASE_URL: llm.baseUrl, OPENAI_MODEL: 'gpt-4.1-mini' };
      delete env.OPENAI_API_KEY;
      const { code, output } = await runSuite(
        ['--mode', 'live', '--task-ids', [...byId.keys()].join(','), '--out', out],
        env,
      );
      assert.equal(code, 0, output.slice(-4000));
      const report = readReport(out);
      assert.equal(report.mode.mode, 'live');
      assert.equal(report.metadata.model, 'gpt-4.1-mini');
      assert.equal(report.metadata.base_url_kind, 'local');
      assert.equal(report.phases.baseline!.db_match.count, chosen.length);
      assert.equal(report.phases.baseline!.duplicate_writes, 0);
      // The customer was the LLM: its first request carried the task's instructions, and it consented.
      const customer = llm.requests().filter((r) => r.idempotencyKey?.includes(':customer:'));
      const system = (customer[0]!.body as { messages: Array<{ content: string }> }).messages[0]!.content;
      assert.ok(
        chosen.some((t) =>
          system.includes((t.user_scenario.instructions as { reason_for_call: string }).reason_for_call),
        ),
      );
      assert.ok(customer.length >= chosen.length * 2, `${customer.length} customer requests`);
    } finally {
      await llm.close();
    }
  });

  it('refuses a bad task file in one line, exit code 2', async () => {
    const dir = tempDir('tau2-file-');
    const file = path.join(dir, 'tasks.json');
    writeFileSync(file, JSON.stringify([{ ...tasks[0], user_scenario: { instructions: { domain: 'retail' } } }]));
    const { code, output } = await runSuite(['--tasks', file]);
    assert.equal(code, 2);
    assert.match(output.trim(), /^eval: .*tasks\.json: task 0: user_scenario\.instructions/);
    assert.equal(output.trim().split('\n').length, 1);
  });
});
