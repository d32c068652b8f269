// A call of an MCP server's tool as a Temporal activity, typed `<server>.<tool>` (registered as the
// worker's dynamic activity: the tools are known per run, from its recorded discovery). The
// idempotency key and the principal travel in the request's `_meta`; the activity's cancellation
// signal cancels the MCP request (the SDK sends notifications/cancelled); the result is wrapped in
// the observation envelope with the server as its source (untrusted, size-capped, redacted by config).
import { ApplicationFailure, Context } from '@temporalio/activity';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { McpCallInput } from '../../common/mcp/discovery';
import { MCP_META } from '../../common/mcp/meta';
import { withRunMeta } from './run-proof';
import { runOf } from './run-of';
import { requestTurn, sentBefore } from '../../common/cost/llm-requests';
import type { Observation } from '../../common/types';
import { envelope } from '../tools/envelope';
import { logObservation } from '../tools/observation-log';
import { HEARTBEAT_EVERY_MS } from '../tools/tool-activity';
import type { McpConnection } from './connect';
import { McpConfigError, withMcpClient } from './connect';
import { MCP_CONFIG, MCP_TOOL_ERROR, MCP_UNAVAILABLE } from '../../common/agent-messages';

export interface McpToolActivityInput extends McpCallInput {
  connection: McpConnection;
  timeout_seconds: number;
  sensitive?: string[];
  /**
   * The calls the server may get (the config's max_attempts): attempts a hung worker swallowed
   * never called, so they are not counted. Absent (runs started before it): Temporal's attempts decide.
   */
  max_calls?: number;
}

/** What an attempt's heartbeats carry to the next attempt: the attempts that called the server. */
interface CallLedger {
  sent: number[];
}

/** Errors a retry cannot fix: the server refused the request itself (no such tool, bad parameters). */
const FOR_GOOD = new Set<number>([ErrorCode.InvalidParams, ErrorCode.MethodNotFound, ErrorCode.InvalidRequest]);

export async function callMcpTool(input: McpToolActivityInput): Promise<Observation> {
  const activity = Context.current();
  const name = activity.info.activityType;
  const signal = activity.cancellationSignal;
  const { attempt } = activity.info;
  // The attempts before this one that called the server, and whether this one may (llm-requests.ts).
  const sent = sentBefore(activity.info.heartbeatDetails, attempt);
  const turn = requestTurn(sent, input.max_calls);
  const ledger = (): CallLedger => ({ sent });
  if (turn === 'spent')
    // Only an attempt that died after calling leaves the count spent (a failed last call is final).
    throw ApplicationFailure.create({
      message: `${name}: not called again: its ${sent.length} calls (max_attempts) are spent, the last one ended without an answer`,
      type: MCP_UNAVAILABLE,
      nonRetryable: true,
      details: [ledger()],
    });
  // Says, before calling, that this attempt calls: the first heartbeat goes out at once.
  sent.push(attempt);
  activity.heartbeat(ledger());
  const beat = setInterval(() => activity.heartbeat(ledger()), HEARTBEAT_EVERY_MS);
  try {
    const request = { name: input.tool, arguments: input.args };
    const run = runOf(input, activity.info);
    const result = await withMcpClient(input.server, input.connection, signal, run.session, (client) =>
      client.callTool(
        { ...request, _meta: withRunMeta(request, { [MCP_META.idempotencyKey]: input.idempotency_key }, run.identity) },
        undefined,
        { signal, timeout: input.timeout_seconds * 1000 },
      ),
    );
    const data = dataOf(result as CallToolResult); // masked already (withMcpClient)
    // A result of several items is a list: the configured paths apply to each item, and to the
    // JSON text of each embedded resource, too.
    const paths = input.sensitive ?? [];
    const sensitive = Array.isArray(data)
      ? [...paths, ...paths.flatMap((p) => [`*.${p}`, `*.resource.text.${p}`])]
      : paths;
    // Fail closed: sensitive paths cannot be found in data that is not structured, nor in text
    // inside it that names a sensitive field, so such a result is not shown.
    const shown = paths.length > 0 && !redactable(data, paths) ? WITHHELD : data;
    const observation = envelope(name, input.server, result.isError !== true, shown, { sensitive });
    logObservation(name, observation);
    return observation;
  } catch (err) {
    if (signal.aborted) throw err; // the cancel, as the SDK reports it
    if (err instanceof McpConfigError) throw ApplicationFailure.nonRetryable(err.message, MCP_CONFIG);
    if (err instanceof McpError && FOR_GOOD.has(err.code))
      throw ApplicationFailure.nonRetryable(`${name}: ${err.message}`, MCP_TOOL_ERROR);
    // The server died, hung up or timed out: Temporal retries the call (with the same key), unless
    // this was the last call max_attempts allows.
    throw ApplicationFailure.create({
      message: `${name}: ${err instanceof Error ? err.message : String(err)}`,
      type: MCP_UNAVAILABLE,
      nonRetryable: turn === 'last',
      details: [ledger()],
    });
  } finally {
    clearInterval(beat);
  }
}

/**
 * The result's data: its one text, else its structured content, else its items (an embedded
 * resource's text too), with JSON text read as JSON wherever it is, nested strings included (so
 * the configured paths reach into them).
 */
function dataOf(result: CallToolResult): unknown {
  const [only] = result.content;
  if (result.content.length === 1 && only?.type === 'text') return parsedDeep(only.text);
  if (result.structuredContent !== undefined) return parsedDeep(result.structuredContent);
  return result.content.map((c) => {
    if (c.type === 'text') return parsedDeep(c.text);
    if (c.type === 'resource' && 'text' in c.resource)
      return { ...c, resource: { ...c.resource, text: parsedDeep(c.resource.text) } };
    return parsedDeep(c);
  });
}

/** What a result that should be redacted but cannot be (not structured data) is replaced with. */
export const WITHHELD = '[withheld: the result is not structured data and the tool has sensitive fields]';

/** JSON is parsed inside strings this deep (JSON in a field of JSON in a string …). */
export const MAX_PARSE_DEPTH = 8;

/** `value` with every string that is JSON (an object, array or JSON string) parsed, at any depth. */
export function parsedDeep(value: unknown, depth = 0): unknown {
  if (depth > MAX_PARSE_DEPTH) return value;
  if (typeof value === 'string') {
    const start = value.trimStart()[0];
    if (start !== '{' && start !== '[' && start !== '"') return value;
    try {
      return parsedDeep(JSON.parse(value) as unknown, depth + 1);
    } catch {
      return value;
    }
  }
  if (Array.isArray(value)) return value.map((v) => parsedDeep(v, depth));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, parsedDeep(v, depth)]));
  return value;
}

/**
 * Whether the paths can do their work on `data`: it is structured, and no text left in it (text
 * that is not JSON, or JSON nested too deep) names a sensitive field (`ssn` of `user.ssn`).
 */
export function redactable(data: unknown, paths: readonly string[]): boolean {
  if (typeof data !== 'object' || data === null) return false;
  const names = [...new Set(paths.flatMap((p) => p.split('.')).filter((n) => n.length > 0 && n !== '*'))].map((n) =>
    n.toLowerCase(),
  );
  const clean = (v: unknown): boolean => {
    if (typeof v === 'string') return !names.some((n) => v.toLowerCase().includes(n));
    if (Array.isArray(v)) return v.every(clean);
    if (v !== null && typeof v === 'object') return Object.values(v).every(clean);
    return true;
  };
  return clean(data);
}
