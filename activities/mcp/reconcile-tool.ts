// The activity `reconcile_<server>.<tool>`: an effect's lookup by key at the MCP server that made
// it (`_meta.reconcile` = settle, with the call's key, arguments and principal). The server answers
// from its system of record and runs nothing; an answer that is not a ReconcileOutput is a failure
// (the run then reports the effect ambiguous), never a guess.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { MCP_META, MCP_RECONCILE_SETTLE } from '../../common/mcp/meta';
import { EFFECT_OUTCOMES } from '../../common/types';
import type { EffectOutcome, ReconcileOutput } from '../../common/types';
import type { McpToolActivityInput } from './call-tool';
import { mcpLookupCall } from './lookup-call';
import { MCP_NO_LOOKUP } from '../../common/agent-messages';

export async function reconcileMcpTool(input: McpToolActivityInput): Promise<ReconcileOutput> {
  const name = Context.current().info.activityType;
  const result = await mcpLookupCall(input, {
    [MCP_META.idempotencyKey]: input.idempotency_key,
    [MCP_META.reconcile]: MCP_RECONCILE_SETTLE,
  });
  const found = result.structuredContent as Partial<ReconcileOutput> | undefined;
  if (result.isError || !found || !EFFECT_OUTCOMES.includes(found.state as EffectOutcome))
    throw ApplicationFailure.nonRetryable(`${name}: the server answered no lookup: ${textOf(result)}`, MCP_NO_LOOKUP);
  return {
    state: found.state as EffectOutcome,
    ...(typeof found.amount_usd === 'number' ? { amount_usd: found.amount_usd } : {}),
    ...(typeof found.refund_id === 'number' ? { refund_id: found.refund_id } : {}),
    ...(typeof found.detail === 'string' ? { detail: found.detail.slice(0, 200) } : {}),
  };
}

function textOf(result: CallToolResult): string {
  const text = result.content.find((c) => c.type === 'text');
  return (text?.type === 'text' ? text.text : JSON.stringify(result.structuredContent ?? null)).slice(0, 200);
}
