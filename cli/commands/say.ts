// `agent say ID TEXT [--end]`: the customer's message to a conversation run (the `say` Update);
// --end ends the conversation. Sent at once: a message that arrives while the agent works waits
// in the transcript for the agent's next decision.
import { UsageError, usageText } from '../cli-args';
import { defineCommand, line, printJson, withDeadline } from '../cli-context';
import { AgentError } from '../../client/agent-error';
import { sayToRun } from '../../client/conversation';
import type { SayRequest } from '../../common/conversation/conversation';

/** How long the CLI waits for the run to take the message (it needs a worker). */
export const SAY_TIMEOUT_MS = 15_000;
const HINT = 'see `agent help say`';

const spec = {
  positionals: [
    { name: 'ID', required: true, help: 'workflow id of the conversation run' },
    { name: 'TEXT', required: false, help: 'what the customer says (quote it); optional with --end' },
  ],
  flags: { end: { kind: 'boolean', help: 'the customer ends the conversation (after this message, if any)' } },
} as const;

export const say = defineCommand({
  spec,
  usage: usageText('agent say ID [TEXT] [--end] [-o text|json|jsonl]', spec),
  async run(args, ctx) {
    const [workflowId, text] = args.positionals as [string, string | undefined];
    const end = args.flags.end === true;
    if (text === undefined && !end) throw new UsageError('say what? give TEXT, or --end to end the conversation', HINT);
    if (text !== undefined && text.trim() === '') throw new UsageError('the message must not be empty', HINT);
    const message: SayRequest = { ...(text !== undefined ? { text } : {}), ...(end ? { end: true } : {}) };
    const client = await ctx.client();
    const receipt = await sendOrExplain(workflowId, () =>
      withDeadline(client, SAY_TIMEOUT_MS, () => sayToRun(client, workflowId, message)),
    );
    // -o json: the receipt {n, awaited, ended}.
    if (ctx.output !== 'text') printJson(ctx, receipt);
    else {
      const how = receipt.awaited ? 'the agent was waiting for it' : "it waits for the agent's next decision";
      line(
        ctx.io.stdout,
        `said (turn ${receipt.n}) in ${workflowId}: ${how}${receipt.ended ? '; conversation ended' : ''}`,
      );
    }
    return 0;
  },
});

/** A deadline passed: almost always no worker on the run's task queue. */
export async function sendOrExplain<T>(workflowId: string, send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (err) {
    if ((err as { code?: number }).code === 4)
      throw new AgentError(
        `run ${workflowId} did not take the message within ${SAY_TIMEOUT_MS / 1000} s; is a worker polling its task queue? (npm run worker)`,
      );
    throw err;
  }
}
