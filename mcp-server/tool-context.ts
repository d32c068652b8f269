// The ToolContext a domain's handler gets when an MCP client calls it (no Temporal activity): the
// request's AbortSignal is the cancellation, a request's attempt counts the requests this server
// saw with its idempotency key (a client that retries sends the same key in `_meta`, and an effect
// finds its first outcome), and failures are plain errors the server reports as an error result.
import type { EffectFaults, ToolContext } from '../common/tools/tool';
import { envelope } from '../activities/tools/envelope';
import { sleepUnlessAborted } from '../activities/tools/tool-activity';

const NO_FAULTS = { pauseBeforeCommitMs: 0, pauseAfterCommitMs: 0 } as const;

/** A failure the server reports to the client as an error result, with its type. */
export class McpToolFailure extends Error {
  constructor(
    message: string,
    readonly type: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

export function mcpToolContext<Services>(
  tool: string,
  services: Services,
  runKey: string,
  signal: AbortSignal,
  attempt = 1,
  faults: EffectFaults = NO_FAULTS,
): ToolContext<Services> {
  return {
    services,
    faults,
    envelope: (source, ok, data) => envelope(tool, source, ok, data),
    attempt,
    // The key of the run's records (retail: the database of this MCP session or of the `_meta` run key).
    workflowId: runKey,
    startHeartbeats: () => () => undefined,
    // No heartbeats over MCP: no earlier attempt's details to compare with.
    earlierHeartbeat: undefined,
    stall: (ms) => sleepUnlessAborted(ms, signal),
    cancellationSignal: signal,
    throwIfCancelled: () => {
      if (signal.aborted) throw new McpToolFailure(`${tool}: cancelled by the client`, 'Cancelled', false);
    },
    failForGood: (message, type) => new McpToolFailure(message, type, false),
    failRetryable: (message, type) => new McpToolFailure(message, type, true),
    // The client's cancel is the request's: an effect asks before it commits.
    runCancelRequested: async () => signal.aborted,
  };
}
