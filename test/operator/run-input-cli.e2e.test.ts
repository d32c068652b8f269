// Bad operator input never starts a run: `agent run` checks its whole input with the workflow's
// own schema before it connects (exit 2, one line naming the flag), and startRun() refuses the
// same input for the demo and other programmatic callers. Nothing reaches the server.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { WorkflowNotFoundError } from '@temporalio/client';
import { InvalidRunInputError, startRun } from '../../client/agent-client';
import type { AgentInput, CarriedState } from '../../common/types';
import { EMPTY_USAGE } from '../../common/cost/budget';
import { agentInput, uniqueId } from '../helpers/harness';
import { agentFixture } from '../helpers/agent-fixture';
import { runCli } from '../helpers/cli';

// No worker: nothing here may start a run, so none would ever run.
const fixture = agentFixture({ queue: 'bad-input', worker: false });

async function notStarted(id: string): Promise<void> {
  await assert.rejects(
    fixture.client.workflow.getHandle(id).describe(),
    WorkflowNotFoundError,
    `no run ${id} was started`,
  );
}

describe('bad input to agent run', () => {
  it('exits 2 with one line naming the flag, and starts nothing', async () => {
    const cases: Array<[string[], RegExp]> = [
      [
        ['--approval-timeout', '9000000000000'],
        /^agent: invalid run input: approval_timeout_seconds: .+ \(--approval-timeout\); see `agent help run`$/,
      ],
      [
        ['--max-seconds', String(31 * 86_400)],
        /^agent: invalid run input: budget\.max_seconds: .+ \(--max-seconds\); see `agent help run`$/,
      ],
      [['--max-steps', '0'], /^agent: --max-steps must be a positive integer, got "0"/],
      [
        ['--max-repeats', '101'],
        /^agent: invalid run input: budget\.max_repeats: .+ \(--max-repeats\); see `agent help run`$/,
      ],
      [['--max-repeats', '-1'], /^agent: --max-repeats must be a whole number from 0, got "-1"; see `agent help run`$/],
      [
        ['--allow', 'get_user_profile,launch_missiles'],
        /^agent: invalid run input: allow\.1: unknown tool "launch_missiles" \(known: .+\) \(--allow\); see `agent help run`$/,
      ],
      [['--validator', 'maybe'], /^agent: invalid run input: validator: .+ \(--validator\); see `agent help run`$/],
      [
        ['--allow', 'search_policy,search_policy'],
        /^agent: invalid run input: allow: allow lists a tool twice \(--allow\)/,
      ],
      [
        ['--principal', 'anna@example.com'],
        /^agent: invalid run input: principal: "anna@example\.com" is not a support user id .+ \(--principal\/--user\); see `agent help run`$/,
      ],
      [
        ['--user', '7', '--principal', '7'],
        /^agent: give one of --principal, --user, --user-id; see `agent help run`$/,
      ],
    ];
    for (const [flags, pattern] of cases) {
      const id = uniqueId('bad-run');
      // Each case names whom the run is for unless a principal flag is what it tests.
      const who = flags.some((f) => /^--(principal|user|user-id)$/.test(f)) ? [] : ['--user', '42'];
      const r = await runCli(fixture.env, ['run', 'User 42 asked: can I get a refund?', '--id', id, ...who, ...flags]);
      assert.equal(r.code, 2, `${flags.join(' ')}: ${r.stdout}${r.stderr}`);
      assert.equal(r.stdout, '');
      const lines = r.stderr.trim().split('\n');
      assert.equal(lines.length, 1, r.stderr);
      assert.match(lines[0]!, pattern);
      await notStarted(id);
    }
  });

  it('a run for nobody in particular: no default principal, one line and exit 2 (run and chat)', async () => {
    // Issue 29, item 10: this ran as user 42 and answered about them, exit 0.
    const missing =
      /^agent: whom does the run act for\? the support domain needs --principal ID \(or --user N\): a user id: .+; there is no default; see `agent help (run|chat)`$/;
    for (const command of [['run', 'User 7 asked: Can I get a refund now?', '--wait'], ['chat']]) {
      const id = uniqueId('no-principal');
      const r = await runCli(fixture.env, [...command, '--id', id]);
      assert.equal(r.code, 2, `${command[0]}: ${r.stdout}${r.stderr}`);
      assert.equal(r.stdout, '');
      const lines = r.stderr.trim().split('\n');
      assert.equal(lines.length, 1, r.stderr);
      assert.match(lines[0]!, missing);
      await notStarted(id);
    }
  });

  it('startRun() refuses it too, and the carried state only the workflow may write', async () => {
    const carried: CarriedState = {
      started_at_ms: 0,
      usage: { ...EMPTY_USAGE },
      trace: [],
      history: [],
      seen_calls: [],
    };
    const bad: Array<[Partial<AgentInput>, RegExp]> = [
      [{ budget: { max_steps: 0 } }, /budget\.max_steps/],
      [{ approval_timeout_seconds: 9_000_000_000_000 }, /approval_timeout_seconds/],
      [{ allow: ['get_user_profile', 'launch_missiles'] }, /unknown tool "launch_missiles"/],
      [{ principal: '42x' }, /^invalid run input: principal: "42x" is not a support user id/],
      // No default for other clients either: the workflow's own check.
      [{ principal: undefined }, /^invalid run input: principal: the support domain needs one: whom the run acts for/],
      [{ carried }, /carried: set only by the workflow/],
    ];
    for (const [override, pattern] of bad) {
      const id = uniqueId('bad-start');
      await assert.rejects(startRun(fixture.client, fixture.env, agentInput(override), id), (err: unknown) => {
        assert.ok(err instanceof InvalidRunInputError, String(err));
        assert.match(err.message, pattern);
        return true;
      });
      await notStarted(id);
    }
  });
});
