// The MCP configuration of a run: which MCP servers it may use and, per tool, what the gateway must
// know about it. Connections name environment variables, never their values (the config travels in
// the run's input, so in its history); a tool the config does not name is denied.
import { sharedAcrossRuns } from '../shared-across-runs';
import { z } from 'zod';

export const MCP_SERVER_NAME = /^[a-z][a-z0-9_-]{0,31}$/;
export const MCP_TOOL_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

const envName = sharedAcrossRuns('common/mcp/config:envName', () =>
  z.string().regex(ENV_NAME, 'an environment variable name'),
);

export const mcpToolConfigSchema = sharedAcrossRuns('common/mcp/config:mcpToolConfigSchema', () =>
  z.strictObject({
    /** The model may call it; false (or a tool not named at all) is denied. */
    allowed: z.boolean(),
    /** It changes the world: an effect, called with its idempotency key and waited for on a cancel. */
    effectful: z.boolean().optional(),
    /** A person confirms each call: the customer in a conversation, an operator otherwise. */
    needs_confirmation: z.boolean().optional(),
    timeout_seconds: z.number().int().min(1).max(3600).optional(),
    max_attempts: z.number().int().min(1).max(20).optional(),
    /** The argument naming whom the call is about: it must be the run's principal. */
    principal_arg: z.string().min(1).max(64).optional(),
    /**
     * The argument naming an object the principal must own (an order): the server answers whose it
     * is (`_meta.owner`, as this project's server does) before anyone is asked, and another's is
     * `policy_denied:other_user`.
     */
    owned_arg: z.string().min(1).max(64).optional(),
    /** Identifies the customer: a successful result that is a string is whom the run acts for (the first one). */
    authenticates: z.boolean().optional(),
    /**
     * The server applies a call once per `_meta.idempotency_key` and answers a lookup by key
     * (`_meta.reconcile`, as this project's server does): an effect cut off mid-call is looked up
     * there instead of being reported ambiguous. Only for a server known to do so: another would run the call.
     */
    reconcile_by_key: z.boolean().optional(),
    /** Dot paths into the result that the model and the logs never see. */
    sensitive: z.array(z.string().min(1).max(200)).max(50).optional(),
  }),
);

const toolsSchema = z
  .record(z.string().regex(MCP_TOOL_NAME, 'a tool name (letters, digits, _ . -)'), mcpToolConfigSchema)
  .refine((tools) => Object.keys(tools).length <= 100, 'at most 100 tools per server');

const stdioServerSchema = sharedAcrossRuns('common/mcp/config:stdioServerSchema', () =>
  z.strictObject({
    command: z.string().min(1).max(500),
    args: z.array(z.string().max(1000)).max(50).optional(),
    /** Names of the worker's environment variables the server process gets (values stay on the worker). */
    env: z.array(envName).max(50).optional(),
    cwd: z.string().max(1000).optional(),
    /**
     * The server is told the run's identity in each call's `_meta` (run key, chain, principal and,
     * with AGENT_MCP_RUN_SECRET, the run's proof): only for a server trusted with it, as this
     * project's own MCP server is; any other server never receives them.
     */
    run_identity: z.boolean().optional(),
    tools: toolsSchema,
  }),
);

const httpServerSchema = sharedAcrossRuns('common/mcp/config:httpServerSchema', () =>
  z.strictObject({
    url: z.url({ protocol: /^https?$/ }),
    /** HTTP header -> the worker's environment variable holding its value (e.g. a bearer token). */
    headers_from_env: z.record(z.string().min(1).max(100), envName).optional(),
    /**
     * The server is told the run's identity in each call's `_meta` (run key, chain, principal and,
     * with AGENT_MCP_RUN_SECRET, the run's proof): only for a server trusted with it, as this
     * project's own MCP server is; any other server never receives them.
     */
    run_identity: z.boolean().optional(),
    tools: toolsSchema,
  }),
);

export const mcpServerConfigSchema = sharedAcrossRuns('common/mcp/config:mcpServerConfigSchema', () =>
  z.union([stdioServerSchema, httpServerSchema]),
);

export const mcpConfigSchema = sharedAcrossRuns('common/mcp/config:mcpConfigSchema', () =>
  z.strictObject({
    servers: z
      .record(z.string().regex(MCP_SERVER_NAME, 'a server name (lower case, digits, _ -)'), mcpServerConfigSchema)
      .refine((servers) => Object.keys(servers).length >= 1, 'name at least one server')
      .refine((servers) => Object.keys(servers).length <= 10, 'at most 10 servers'),
  }),
);

export type McpConfig = z.output<typeof mcpConfigSchema>;
export type McpServerConfig = z.output<typeof mcpServerConfigSchema>;
export type McpToolConfig = z.output<typeof mcpToolConfigSchema>;

/** The config, or the first problem in one line with its path ("servers.fs.url: ..."). */
export function parseMcpConfig(raw: unknown): { ok: true; config: McpConfig } | { ok: false; error: string } {
  const parsed = mcpConfigSchema.safeParse(raw);
  if (parsed.success) return { ok: true, config: parsed.data };
  const issue = parsed.error.issues[0]!;
  const where = issue.path.length > 0 ? `${issue.path.map(String).join('.')}: ` : '';
  // A bad record key says why through its own issue ("a server name ..."), not zod's "Invalid key".
  const message = issue.code === 'invalid_key' ? (issue.issues[0]?.message ?? issue.message) : issue.message;
  return { ok: false, error: `invalid MCP config: ${where}${message.replace(/\s+/g, ' ').slice(0, 200)}` };
}

/** The run's name of a server's tool (the activity's type too): never a domain tool's (no dot there). */
export const mcpToolName = (server: string, tool: string): string => `${server}.${tool}`;

/** A server's connection (what an activity needs to reach it), without the tool rules. */
export type McpConnection =
  Omit<z.output<typeof stdioServerSchema>, 'tools'> | Omit<z.output<typeof httpServerSchema>, 'tools'>;

/** The connection part of a server's config. */
export function connectionOf(server: McpServerConfig): McpConnection {
  const { tools: _rules, ...connection } = server;
  return connection;
}
