// A domain's tools served over MCP (the official SDK's low-level Server): each tool's name,
// description and the JSON Schema of its arguments (the catalog's, so an MCP client and the model
// see the same tool), and calls that run the tool's handler under the rules that need no workflow:
// the argument schema (`tool_bad_args:<tool>`), the principal rule and the owner of the object a
// write changes (`policy_denied:<rule>`), and an idempotency key per call. Tools that need an
// operator's approval or the customer's consent are served only with `effects` on: the MCP client
// then answers for that confirmation, and the tool carries the destructive hint.
import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Domain } from '../common/domain';
import { observationForModel } from '../common/model-view/decision-payload';
import { registryOf, specOf } from '../common/tools/tool-catalog';
import { catalogEntryOf } from '../common/tools/index';
import type { ToolDefinition } from '../common/tools/tool';
import type { Observation } from '../common/types';
import { checkPrincipalPolicy } from '../workflows/agent/policy';
import { mcpToolContext } from './tool-context';
import type { ToolPause } from '../activities/tools/drill';
import { sleepUnlessAborted } from '../activities/tools/tool-activity';
import { MCP_META, MCP_RECONCILE_SETTLE } from '../common/mcp/meta';
import type { EffectFaults } from '../common/tools/tool';
import { lookupByKey, lookupOwner } from './lookup';
import type { KeyAttempts } from './key-attempts';
import { runProven } from '../activities/mcp/run-proof';
import type { ProvenRequest } from '../activities/mcp/run-proof';

export interface DomainServerOptions {
  domain: Domain;
  services: unknown;
  /** Serve tools that change the world behind an approval or consent (the client confirms them). */
  effects: boolean;
  /** Whom the session acts for, as the operator named it (domains whose principal is not learnt). */
  principal?: string;
  version: string;
  /** The slow-tool drill (AGENT_TOOL_PAUSE_MS): a read-only call waits this long first, ending early on the client's cancel. */
  pause?: ToolPause;
  /** One line per call and per cancel (stderr: on stdio, stdout carries the protocol). */
  log?: (line: string) => void;
  /** The effects' drills (AGENT_REFUND_PAUSE_*): a key's first request stalls before or after its commit. */
  faults?: EffectFaults;
  /** Requests seen per idempotency key, shared by the process's sessions: a repeat is a retry (attempt 2, 3, ...). */
  attempts?: KeyAttempts;
  /** AGENT_MCP_RUN_SECRET: a call proving its run with it shares that run's authentication across sessions. */
  runSecret?: string;
}

/** Served at all: a tool behind a confirmation only when the server was started with effects on. */
function served(tool: ToolDefinition, effects: boolean): boolean {
  return effects || !(tool.needsApproval || tool.needsConsent);
}

export function mcpToolOf(tool: ToolDefinition): Tool {
  const entry = catalogEntryOf(tool);
  const changes = tool.effectful === true || tool.needsConsent === true;
  return {
    name: entry.name,
    description: entry.description,
    inputSchema: entry.args as Tool['inputSchema'],
    annotations: { readOnlyHint: !changes, destructiveHint: changes },
  };
}

/**
 * Whom each proven run (or else each session) acts for once a customer authenticated: shared by the
 * process's sessions (a run outlives one). Keyed by authKey, never by what a caller merely names.
 */
export type LearntPrincipals = Map<string, string>;

/** One MCP server per session (an SDK Server serves one transport); `sessionKey` names its records. */
export function createDomainServer(
  options: DomainServerOptions,
  sessionKey: string,
  principals: LearntPrincipals = new Map(),
): Server {
  const { domain } = options;
  const tools = domain.tools.filter((tool) => served(tool, options.effects));
  const registry = registryOf(tools);
  const server = new Server(
    { name: `durable-react-agent-${domain.name}`, version: options.version },
    { capabilities: { tools: { listChanged: false } } },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: tools.map(mcpToolOf) }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const { name } = request.params;
    const meta = (request.params._meta ?? {}) as Record<string, unknown>;
    // A lookup asked with `true` or a number must not become the write it was meant to avoid.
    const badMeta = Object.values(MCP_META).find((key) => meta[key] !== undefined && textMeta(meta, key) === undefined);
    if (badMeta !== undefined)
      return refused('invalid_meta', `_meta.${badMeta} must be a non-empty string; nothing was run`);
    const tool = specOf(registry, name);
    if (!tool) return refused(`tool_missing:${name}`, `no tool named "${name.slice(0, 64)}" is served here`);
    const parsed = tool.args.safeParse(request.params.arguments ?? {});
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
      return refused(`tool_bad_args:${name}`, `${where}${issue?.message ?? 'invalid arguments'}`);
    }
    const args = parsed.data;
    const runKey = textMeta(meta, MCP_META.runKey) ?? sessionKey;
    const auth = authKey(options.runSecret, { name, arguments: request.params.arguments ?? {}, meta }, sessionKey);
    const principal = principalFor(options, meta, principals.get(auth));
    if ('error' in principal) return refused('invalid_principal', principal.error);
    const decision = checkPrincipalPolicy(tool, args, { principal: principal.id, history: [] });
    if (!decision.allowed) return refused(`policy_denied:${decision.rule}`, `${name} refused by policy`);
    if (textMeta(meta, MCP_META.owner) !== undefined) return lookupOwner(tool, args, principal.id, options.services);
    if (tool.ownedArg !== undefined && tool.owner) {
      const owner = await tool.owner(args, { services: options.services });
      if (owner !== null && owner !== principal.id)
        return refused('policy_denied:other_user', `${name}: the object belongs to another principal`);
    }
    const lookup = textMeta(meta, MCP_META.reconcile);
    if (lookup !== undefined) {
      options.log?.(`lookup ${name} (key ${textMeta(meta, MCP_META.idempotencyKey) ?? 'none'})`);
      const settle = lookup === MCP_RECONCILE_SETTLE;
      return lookupByKey(tool, textMeta(meta, MCP_META.idempotencyKey), settle, options.services);
    }
    const idempotencyKey = textMeta(meta, MCP_META.idempotencyKey) ?? `mcp-${randomUUID()}`;
    const attempt = options.attempts?.next(idempotencyKey) ?? 1;
    options.log?.(`call ${name} (key ${idempotencyKey}, attempt ${attempt})`);
    extra.signal.addEventListener('abort', () => options.log?.(`${name} cancelled by the client`), { once: true });
    const pause = options.pause;
    if (pause && pause.ms > 0 && !tool.effectful && (!pause.tools || pause.tools.includes(name)))
      await sleepUnlessAborted(pause.ms, extra.signal);
    if (extra.signal.aborted) return refused(`cancelled:${name}`, 'cancelled by the client before it ran');
    const ctx = mcpToolContext(name, options.services, runKey, extra.signal, attempt, options.faults);
    let observation: Observation;
    try {
      observation = await tool.handler(args, ctx, {
        args,
        idempotency_key: idempotencyKey,
        ...(principal.id !== undefined ? { principal: principal.id } : {}),
      });
    } catch (err) {
      return refused(`tool_error:${name}`, err instanceof Error ? err.message : String(err));
    }
    if (tool.authenticates && observation.ok && typeof observation.data === 'string' && principal.id === undefined)
      principals.set(auth, observation.data);
    return resultOf(observation, tools);
  });
  return server;
}

/**
 * Under which key the call's authentication is kept: the run (key and chain) when the request
 * proves it with the shared secret (the proof covers this very request), so the runtime's retries
 * and other workers of the run keep it; else the MCP session. A `run_key` alone names records,
 * never whom they may be read as.
 */
function authKey(secret: string | undefined, request: ProvenRequest, sessionKey: string): string {
  const runKey = textMeta(request.meta, MCP_META.runKey);
  const chain = textMeta(request.meta, MCP_META.runChain);
  if (secret && runKey && chain && runProven(secret, request)) return JSON.stringify(['run', runKey, chain]);
  return JSON.stringify(['session', sessionKey]);
}

/** The principal of a call: `_meta` (operator-named domains only), the session's, or none yet. */
function principalFor(
  options: DomainServerOptions,
  meta: Record<string, unknown>,
  learnt: string | undefined,
): { id: string | undefined } | { error: string } {
  const rule = options.domain.principal;
  const asked = textMeta(meta, MCP_META.principal);
  // The operator's --principal is the session's: a caller may repeat it, never name another.
  if (options.principal !== undefined && asked !== undefined && asked !== options.principal)
    return { error: `this server acts for the principal its operator named; "${asked.slice(0, 64)}" may not be named` };
  const named = asked ?? options.principal;
  if (named === undefined) return { id: learnt };
  // A caller may repeat whom the run authenticated (the runtime does), never name someone else.
  if (rule.fromAuthentication)
    return named === learnt
      ? { id: learnt }
      : {
          error: `the ${options.domain.name} domain learns whom it acts for by authentication; no other principal may be named`,
        };
  const problem = rule.check(named);
  return problem ? { error: problem } : { id: named };
}

function textMeta(meta: Record<string, unknown>, key: string): string | undefined {
  const value = meta[key];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/** A call the server did not run (or that failed): an error result the client's model can read. */
function refused(reason: string, detail: string): CallToolResult {
  return {
    isError: true,
    content: [{ type: 'text', text: `${reason}: ${detail}` }],
    structuredContent: { reason, detail },
  };
}

/** The observation as the model would see it (sensitive fields redacted); ok false is an error result. */
function resultOf(observation: Observation, tools: readonly ToolDefinition[]): CallToolResult {
  const view = observationForModel(observation, registryOf(tools));
  return {
    ...(observation.ok ? {} : { isError: true }),
    content: [{ type: 'text', text: JSON.stringify(view.data) }],
    structuredContent: { ...view },
  };
}
