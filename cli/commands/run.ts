// `agent run "<goal>"`: start a reactAgent run; with --wait, follow it to the end.
import { randomBytes } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { DEFAULT_ALLOWED_TOOLS, WIRED_DOMAIN } from '../../domains/wired';
import { DEFAULT_APPROVAL_TIMEOUT_SECONDS } from '../../common/approvals';
import type { Budget } from '../../common/budget';
import type { AgentInput } from '../../common/types';
import type { ValidatorMode } from '../../common/final-validator';
import { checkRunInput, InvalidRunInputError, startRun } from '../../client/agent-client';
import { UsageError, usageText } from '../cli-args';
import { AgentError } from '../../client/agent-error';
import { defineCommand, line, printJson, progressOut } from '../cli-context';
import { EXIT } from '../../client/agent-error';
import { runUrl } from '../../runtime/temporal-env';
import { followAndPrint } from './result';
import { parseUsd } from '../usd';

/** The support domain's demo user: whom a run acts for when no --principal (--user) is given. */
export const DEFAULT_PRINCIPAL = '42';

const spec = {
  positionals: [{ name: 'GOAL', required: true, help: 'what the agent should do, in plain language (quote it)' }],
  flags: {
    principal: {
      kind: 'string',
      value: 'ID',
      help: `whom the run acts for, as the domain spells it (default ${DEFAULT_PRINCIPAL}): ${WIRED_DOMAIN.principal.describe}`,
    },
    user: { kind: 'int', value: 'N', help: "the support domain's spelling of --principal: a user id (--user 42)" },
    'user-id': { kind: 'int', help: 'the same as --user' },
    'max-steps': { kind: 'int', help: 'step budget: LLM decisions (default 8)' },
    'max-tool-calls': { kind: 'int', help: 'tool-call budget (default 6)' },
    'max-seconds': { kind: 'int', help: 'wall-clock budget of the whole run (default 60)' },
    'max-tokens': { kind: 'int', help: 'LLM token budget, prompt + completion (default: no limit)' },
    'max-usd': {
      kind: 'string',
      value: 'USD',
      help: 'dollar budget of the LLM calls, every attempt priced (default: no limit; docs/cost.md)',
    },
    'topup-wait': {
      kind: 'int',
      value: 'SECONDS',
      help: 'when a budget runs out, wait this long for `agent extend` before winding down (default: no wait)',
    },
    allow: {
      kind: 'list',
      help: `tools the model may call (default ${DEFAULT_ALLOWED_TOOLS.join(',')}; add an effectful tool, e.g. a refund, to let it act)`,
    },
    'approval-timeout': {
      kind: 'int',
      value: 'SECONDS',
      help: `how long a call needing approval waits for a person (default ${DEFAULT_APPROVAL_TIMEOUT_SECONDS})`,
    },
    validator: {
      kind: 'string',
      value: 'off|warn|enforce',
      help: "check the final answer's figures against the observations (default: enforce when a tool whose results state facts is allowed, e.g. a refund, else warn)",
    },
    id: { kind: 'string', value: 'ID', help: 'workflow id (default agent-<user>-<time>-<random>)' },
    wait: {
      kind: 'boolean',
      help: 'follow the run step by step, print its result, exit with how it ended (as `agent result`)',
    },
  },
} as const;

export function defaultWorkflowId(principal: string, now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, '')
    .replace('T', '-');
  // The principal is opaque: only its id-safe characters, bounded, name the run.
  const who = principal.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 40);
  return `agent-${who}-${stamp}-${randomBytes(3).toString('hex')}`;
}

/** Input fields as the operator typed them. */
const FLAG_OF: Record<string, string> = {
  goal: 'GOAL',
  principal: '--principal/--user',
  'budget.max_steps': '--max-steps',
  'budget.max_tool_calls': '--max-tool-calls',
  'budget.max_seconds': '--max-seconds',
  'budget.max_tokens': '--max-tokens',
  'budget.max_usd': '--max-usd',
  topup_wait_seconds: '--topup-wait',
  allow: '--allow',
  approval_timeout_seconds: '--approval-timeout',
  validator: '--validator',
};

/** "invalid run input: budget.max_steps: Too small ..." -> "... (--max-steps)". */
function withFlagName(message: string): string {
  const path = /^invalid run input: ([\w.]+): /.exec(message)?.[1];
  const flag = path === undefined ? undefined : (FLAG_OF[path] ?? FLAG_OF[path.replace(/\.\d+$/, '')]);
  return flag ? `${message} (${flag})` : message;
}

export const run = defineCommand({
  spec,
  usage: usageText(
    'agent run GOAL [flags] [-o text|json|jsonl]\n' +
      '(-o json: {workflow_id, run_id, url}, with --wait the result; -o jsonl with --wait: {"type":"started",...}, the events, the result)',
    spec,
  ),
  async run(args, ctx) {
    const goal = args.positionals[0]!;
    if (goal.trim() === '') throw new UsageError('the goal must not be empty', 'see `agent help run`');
    const { flags } = args;
    const given = [flags.principal, flags.user, flags['user-id']].filter((v) => v !== undefined);
    if (given.length > 1) throw new UsageError('give one of --principal, --user, --user-id', 'see `agent help run`');
    // The domain checks the id with the rest of the input below (one line, naming the flag).
    const principal = given.length > 0 ? String(given[0]) : DEFAULT_PRINCIPAL;
    const budget: Partial<Budget> = {};
    if (flags['max-steps'] !== undefined) budget.max_steps = flags['max-steps'];
    if (flags['max-tool-calls'] !== undefined) budget.max_tool_calls = flags['max-tool-calls'];
    if (flags['max-seconds'] !== undefined) budget.max_seconds = flags['max-seconds'];
    if (flags['max-tokens'] !== undefined) budget.max_tokens = flags['max-tokens'];
    if (flags['max-usd'] !== undefined)
      budget.max_usd = parseUsd(flags['max-usd'], '--max-usd', 'see `agent help run`');
    const input: AgentInput = { goal, principal, budget, allow: flags.allow ?? [...DEFAULT_ALLOWED_TOOLS] };
    if (flags['approval-timeout'] !== undefined) input.approval_timeout_seconds = flags['approval-timeout'];
    if (flags['topup-wait'] !== undefined) input.topup_wait_seconds = flags['topup-wait'];
    // Checked with the rest of the input below (the workflow's own schema).
    if (flags.validator !== undefined) input.validator = flags.validator as ValidatorMode;
    const workflowId = flags.id ?? defaultWorkflowId(principal);
    // The workflow's own schema, before connecting: a bad value never reaches the server.
    try {
      checkRunInput(input);
    } catch (err) {
      if (err instanceof InvalidRunInputError) throw new UsageError(withFlagName(err.message), 'see `agent help run`');
      throw err;
    }

    const client = await ctx.client();
    let handle;
    try {
      handle = await startRun(client, ctx.env, input, workflowId);
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) {
        throw new AgentError(`a run with id "${workflowId}" is still running; choose another --id`);
      }
      throw err;
    }
    const url = runUrl(ctx.env, workflowId);
    // startRun's handle carries the first run id; its declared type does not say so.
    const runId = (handle as { firstExecutionRunId?: string }).firstExecutionRunId ?? (await handle.describe()).runId;
    const started = { workflow_id: workflowId, run_id: runId, url };

    if (!flags.wait) {
      if (ctx.output !== 'text') printJson(ctx, started);
      else {
        line(ctx.io.stdout, `started ${workflowId}`);
        line(ctx.io.stdout, `  Web UI: ${url}`);
        line(ctx.io.stdout, `  follow: agent watch ${workflowId}   (result: agent result ${workflowId})`);
      }
      return EXIT.OK;
    }

    if (ctx.output !== 'jsonl') {
      line(progressOut(ctx), `started ${workflowId}`);
      line(progressOut(ctx), `  Web UI: ${url}`);
    }
    return followAndPrint(client, handle, ctx, {
      taskQueue: ctx.env.taskQueue,
      header: { type: 'started', time: new Date().toISOString(), ...started },
    });
  },
});
