// The run an MCP call belongs to, as the worker uses it: the session it is made on (one per run
// and server, so a server that keeps state per session, such as whom it authenticated, never
// shares it between runs) and what the server is told of the run (only a server whose config
// opts in with `run_identity`: the run's key, chain and principal, never to another server).
import type { Info } from '@temporalio/activity';
import type { McpCallInput } from '../../common/mcp/discovery';
import type { McpConnection } from '../../common/mcp/config';

export interface RunOfCall {
  /** The pooled session's scope: the run (workflow id and chain). */
  session: string;
  /** The run's identity for `_meta`, or undefined: the server is not trusted with it. */
  identity: { runKey?: string; chain?: string; principal?: string } | undefined;
}

export function runOf(input: McpCallInput & { connection: McpConnection }, info: Info): RunOfCall {
  const runKey = info.workflowExecution?.workflowId;
  const chain = input.run_chain ?? info.workflowExecution?.runId;
  return {
    session: JSON.stringify([runKey ?? null, chain ?? null]),
    identity: input.connection.run_identity === true ? { runKey, chain, principal: input.principal } : undefined,
  };
}
