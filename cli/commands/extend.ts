// `agent extend ID --usd 0.50 --steps 5 --seconds 120 --reason "..."`: top up a run's budget. A run
// that waits for a top-up (`agent run --topup-wait`) resumes; any running run gets the larger budget.
// Who (AGENT_OPERATOR or $USER, as this process says: not authenticated) and why are recorded in the
// run's history and listed in its result. The run's validator decides the rest (common/cost/extend.ts).
import { UsageError, usageText } from '../cli-args';
import { AgentError } from '../../client/agent-error';
import { defineCommand, line, printJson, withDeadline } from '../cli-context';
import { extendRun } from '../../client/extend-run';
import type { ExtendRequest } from '../../common/cost/extend';
import { formatBudget } from '../format';
import { parseUsd } from '../usd';

const TOPUP_TIMEOUT_MS = 15_000;

const spec = {
  positionals: [{ name: 'ID', required: true, help: 'workflow id of the run' }],
  flags: {
    usd: { kind: 'string', value: 'USD', help: "dollars to add to the run's dollar budget (e.g. 0.50)" },
    steps: { kind: 'int', help: 'steps to add' },
    'tool-calls': { kind: 'int', help: 'tool calls to add' },
    seconds: { kind: 'int', help: 'seconds to add to the time budget' },
    tokens: { kind: 'int', help: "tokens to add to the run's token budget (a run without one refuses)" },
    reason: { kind: 'string', help: 'why the run gets more (required, visible text; recorded with your name)' },
  },
} as const;

export const extend = defineCommand({
  spec,
  usage: usageText(
    'agent extend ID [--usd USD] [--steps N] [--tool-calls N] [--seconds N] [--tokens N] --reason TEXT [-o text|json|jsonl]',
    spec,
  ),
  async run(args, ctx) {
    const { flags } = args;
    const hint = 'see `agent help extend`';
    if (flags.reason === undefined) throw new UsageError('--reason is required: say why the run gets more', hint);
    const request: ExtendRequest = {
      ...(flags.usd !== undefined ? { usd: parseUsd(flags.usd, '--usd', hint) } : {}),
      ...(flags.steps !== undefined ? { steps: flags.steps } : {}),
      ...(flags['tool-calls'] !== undefined ? { tool_calls: flags['tool-calls'] } : {}),
      ...(flags.seconds !== undefined ? { seconds: flags.seconds } : {}),
      ...(flags.tokens !== undefined ? { tokens: flags.tokens } : {}),
      reason: flags.reason,
      operator: process.env.AGENT_OPERATOR || process.env.USER || 'operator',
    };
    if (Object.keys(request).length === 2)
      throw new UsageError('give at least one of --usd, --steps, --tool-calls, --seconds, --tokens', hint);
    const workflowId = args.positionals[0]!;
    const client = await ctx.client();
    let receipt;
    try {
      receipt = await withDeadline(client, TOPUP_TIMEOUT_MS, () => extendRun(client, workflowId, request));
    } catch (err) {
      if ((err as { code?: number }).code === 4)
        throw new AgentError(
          `run ${workflowId} did not take the top-up within ${TOPUP_TIMEOUT_MS / 1000} s; is a worker polling its task queue? (npm run worker)`,
        );
      throw err;
    }
    if (ctx.output !== 'text') printJson(ctx, receipt);
    else
      line(
        ctx.io.stdout,
        receipt.duplicate
          ? `${workflowId} had granted this top-up already (top-up ${receipt.extensions}): budget now ${formatBudget(receipt.budget)}`
          : `extended ${workflowId} (top-up ${receipt.extensions}): budget now ${formatBudget(receipt.budget)}`,
      );
    return 0;
  },
});
