import { z } from 'zod';
import { defineRetailTool } from '../define-tool';

const args = z.strictObject({
  summary: z.string().describe("A summary of the user's issue."),
});

function handler(): string {
  return 'Transfer successful';
}

export const transfer_to_human_agents = defineRetailTool<z.infer<typeof args>, string>({
  name: 'transfer_to_human_agents',
  kind: 'generic',
  description:
    "Transfer the user to a human agent, with a summary of the user's issue. Only transfer if\n -  the user explicitly asks for a human agent\n -  given the policy and the available tools, you cannot solve the user's issue.",
  args,
  handler,
  endsRun: 'transferred',
});
