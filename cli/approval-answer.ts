// What `approve`, `reject` and `answer` share: find the run, send the `approval` Update with a
// deadline (it needs a worker), and turn every refusal into one line on stderr (exit 1).
import { answerApproval } from '../client/approvals';
import type { ApprovalRequest } from '../client/approvals';
import { AgentError } from '../client/agent-error';
import type { CommandContext } from './cli-context';
import { line, printJson, withDeadline } from './cli-context';
import { formatReceipt } from './format-approval';

/** How long the CLI waits for the run to take the answer. */
export const ANSWER_TIMEOUT_MS = 15_000;

export const CALL_FLAG = {
  kind: 'string',
  value: 'CALL_ID',
  help: 'the call id `agent status` shows; refuses to answer anything else (default: whatever is pending now)',
} as const;
export async function sendAnswer(ctx: CommandContext, workflowId: string, req: ApprovalRequest): Promise<number> {
  const client = await ctx.client();
  let receipt;
  try {
    receipt = await withDeadline(client, ANSWER_TIMEOUT_MS, () =>
      answerApproval(client, workflowId, { ...req, operator: req.operator ?? operatorName() }),
    );
  } catch (err) {
    if ((err as { code?: number }).code === 4) {
      throw new AgentError(
        `run ${workflowId} did not take the answer within ${ANSWER_TIMEOUT_MS / 1000} s; is a worker polling its task queue? (npm run worker)`,
      );
    }
    throw err;
  }
  // -o json: the receipt {id, decision, duplicate, pending}.
  if (ctx.output !== 'text') printJson(ctx, receipt);
  else line(ctx.io.stdout, formatReceipt(workflowId, receipt));
  return 0;
}

function operatorName(): string {
  return process.env.AGENT_OPERATOR || process.env.USER || 'operator';
}
