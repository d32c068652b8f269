// `agent run "<goal>"`: start a reactAgent run; with --wait, follow it to the end.
import { randomBytes } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { startRun } from '../../client/agent-client';
import { UsageError, usageText } from '../cli-args';
import { AgentError } from '../../client/agent-error';
import { defineCommand, line, printJson, progressOut } from '../cli-context';
import { EXIT } from '../../client/agent-error';
import { RUN_INPUT_FLAGS, runInputOf } from '../run-input';
import { runUrl } from '../../runtime/temporal-env';
import { followAndPrint } from './result';

const spec = {
  positionals: [{ name: 'GOAL', required: true, help: 'what the agent should do, in plain language (quote it)' }],
  flags: {
    ...RUN_INPUT_FLAGS,
    id: { kind: 'string', value: 'ID', help: 'workflow id (default agent-<user>-<time>-<random>)' },
    wait: {
      kind: 'boolean',
      help: 'follow the run step by step, print its result, exit with how it ended (as `agent result`)',
    },
  },
} as const;

export function defaultWorkflowId(principal: string | undefined, now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, '')
    .replace('T', '-');
  // The principal is opaque: only its id-safe characters, bounded, name the run.
  const who = (principal ?? 'customer').replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 40);
  return `agent-${who}-${stamp}-${randomBytes(3).toString('hex')}`;
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
    const input = runInputOf(goal, flags, 'see `agent help run`');
    const workflowId = flags.id ?? defaultWorkflowId(input.principal);

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
