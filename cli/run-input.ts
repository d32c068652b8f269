// The run input as the operator types it: the flags `agent run` and `agent chat` share, the
// AgentInput they make, and the workflow's own check of it, its errors naming the flag.
import { DEFAULT_DOMAIN, defaultAllowedToolsOf, DOMAIN_NAMES, DOMAINS } from '../domains/index';
import { supportDomain } from '../domains/support/index';
import { DEFAULT_APPROVAL_TIMEOUT_SECONDS } from '../common/conversation/approvals';
import type { Budget } from '../common/cost/budget';
import type { AgentInput } from '../common/types';
import type { ValidatorMode } from '../common/validator/final-validator';
import { checkRunInput, InvalidRunInputError } from '../client/agent-client';
import { UsageError } from './cli-args';
import type { ParsedFlags } from './cli-args';
import { parseUsd } from './usd';
import { readMcpConfigFile } from './mcp-config-file';

/** No --principal/--user for a domain that needs one (`agent chat --id` attaching to a running conversation needs none). */
export class MissingPrincipalError extends UsageError {}

export const RUN_INPUT_FLAGS = {
  domain: {
    kind: 'string',
    value: 'NAME',
    help: `the domain the agent works in: ${DOMAIN_NAMES.join(' or ')} (default ${DEFAULT_DOMAIN}; docs/domains.md)`,
  },
  principal: {
    kind: 'string',
    value: 'ID',
    help: `whom the run acts for, as the domain spells it (required, no default, unless the domain authenticates its customer): ${supportDomain.principal.describe}`,
  },
  user: { kind: 'int', value: 'N', help: "the support domain's spelling of --principal: a user id (--user 42)" },
  'user-id': { kind: 'int', help: 'the same as --user' },
  'max-steps': { kind: 'int', help: 'step budget: LLM decisions (default 8)' },
  'max-tool-calls': { kind: 'int', help: 'tool-call budget (default 6)' },
  'max-repeats': {
    kind: 'string',
    value: 'N',
    help: 'times the same read may be repeated with nothing new in between (it is answered from memory) before the run ends loop_detected (default 2)',
  },
  'max-seconds': { kind: 'int', help: 'wall-clock budget of the whole run (default 60)' },
  'max-tokens': { kind: 'int', help: 'LLM token budget, prompt + completion (default: no limit)' },
  'max-usd': {
    kind: 'string',
    value: 'USD',
    help: 'dollar budget of the LLM calls, every attempt priced (default: no limit; docs/cost.md)',
  },
  'topup-wait': {
    kind: 'int',
    value: 'SECONDS',
    help: 'when a budget runs out, wait this long for `agent extend` before winding down (default: no wait)',
  },
  allow: {
    kind: 'list',
    help: `tools the model may call, or \`all\` for every tool of the domain (default: the domain's read-only tools, ${defaultAllowedToolsOf(supportDomain).join(',')} for support; add an effectful tool, e.g. a refund, to let it act)`,
  },
  'approval-timeout': {
    kind: 'int',
    value: 'SECONDS',
    help: `how long a call needing approval waits for a person (default ${DEFAULT_APPROVAL_TIMEOUT_SECONDS})`,
  },
  mcp: {
    kind: 'string',
    value: 'FILE',
    help: 'MCP servers the run may use, and per tool whether and how (a JSON file; docs/mcp.md)',
  },
  validator: {
    kind: 'string',
    value: 'off|warn|enforce',
    help: "check the final answer's figures against the observations (default: enforce when a tool whose results state facts is allowed, e.g. a refund, else warn)",
  },
} as const;

export type RunInputFlags = ParsedFlags<typeof RUN_INPUT_FLAGS>;

/** Input fields as the operator typed them. */
const FLAG_OF: Record<string, string> = {
  goal: 'GOAL',
  domain: '--domain',
  principal: '--principal/--user',
  'budget.max_steps': '--max-steps',
  'budget.max_tool_calls': '--max-tool-calls',
  'budget.max_repeats': '--max-repeats',
  'budget.max_seconds': '--max-seconds',
  'budget.max_tokens': '--max-tokens',
  'budget.max_usd': '--max-usd',
  topup_wait_seconds: '--topup-wait',
  allow: '--allow',
  approval_timeout_seconds: '--approval-timeout',
  validator: '--validator',
  'conversation.idle_timeout_seconds': '--idle-timeout',
};

/** "invalid run input: budget.max_steps: Too small ..." -> "... (--max-steps)". */
function withFlagName(message: string): string {
  const path = /^invalid run input: ([\w.]+): /.exec(message)?.[1];
  const flag = path === undefined ? undefined : (FLAG_OF[path] ?? FLAG_OF[path.replace(/\.\d+$/, '')]);
  return flag ? `${message} (${flag})` : message;
}

/** A count that may be 0 (`--max-repeats 0`: no repeat): digits only; its range is the schema's. */
function parseCount(raw: string, flag: string, hint: string): number {
  if (!/^[0-9]{1,9}$/.test(raw))
    throw new UsageError(`${flag} must be a whole number from 0, got ${JSON.stringify(raw)}`, hint);
  return Number(raw);
}

/** The run input the flags make, checked by the workflow's own schema before anything connects. */
export function runInputOf(
  goal: string,
  flags: RunInputFlags,
  hint: string,
  more: Partial<AgentInput> = {},
): AgentInput {
  const given = [flags.principal, flags.user, flags['user-id']].filter((v) => v !== undefined);
  if (given.length > 1) throw new UsageError('give one of --principal, --user, --user-id', hint);
  const domainName = flags.domain ?? DEFAULT_DOMAIN;
  if (!Object.hasOwn(DOMAINS, domainName))
    throw new UsageError(
      `--domain: unknown domain "${domainName.slice(0, 64)}" (known: ${DOMAIN_NAMES.join(', ')})`,
      hint,
    );
  const domain = DOMAINS[domainName]!;
  // The domain checks the id with the rest of the input below (one line, naming the flag); a domain
  // that learns whom it serves by authentication takes none. Nobody is assumed: a run about
  // "user 7" must not act for a default user.
  const principal = given.length > 0 ? String(given[0]) : undefined;
  if (principal === undefined && !domain.principal.fromAuthentication)
    throw new MissingPrincipalError(
      `whom does the run act for? the ${domain.name} domain needs --principal ID (or --user N): ${domain.principal.describe}; there is no default`,
      hint,
    );
  const budget: Partial<Budget> = {};
  if (flags['max-steps'] !== undefined) budget.max_steps = flags['max-steps'];
  if (flags['max-tool-calls'] !== undefined) budget.max_tool_calls = flags['max-tool-calls'];
  if (flags['max-repeats'] !== undefined) budget.max_repeats = parseCount(flags['max-repeats'], '--max-repeats', hint);
  if (flags['max-seconds'] !== undefined) budget.max_seconds = flags['max-seconds'];
  if (flags['max-tokens'] !== undefined) budget.max_tokens = flags['max-tokens'];
  if (flags['max-usd'] !== undefined) budget.max_usd = parseUsd(flags['max-usd'], '--max-usd', hint);
  const allow =
    flags.allow?.length === 1 && flags.allow[0] === 'all'
      ? domain.tools.map((tool) => tool.name)
      : (flags.allow ?? [...defaultAllowedToolsOf(domain)]);
  const input: AgentInput = {
    goal,
    ...(flags.domain !== undefined ? { domain: domainName } : {}),
    ...(principal !== undefined ? { principal } : {}),
    budget,
    allow,
    ...more,
  };
  if (flags.mcp !== undefined) {
    const mcp = readMcpConfigFile(flags.mcp);
    if ('error' in mcp) throw new UsageError(mcp.error, hint);
    input.mcp = mcp;
  }
  if (flags['approval-timeout'] !== undefined) input.approval_timeout_seconds = flags['approval-timeout'];
  if (flags['topup-wait'] !== undefined) input.topup_wait_seconds = flags['topup-wait'];
  // Checked with the rest of the input below (the workflow's own schema).
  if (flags.validator !== undefined) input.validator = flags.validator as ValidatorMode;
  // The workflow's own schema, before connecting: a bad value never reaches the server.
  try {
    checkRunInput(input);
  } catch (err) {
    if (err instanceof InvalidRunInputError) throw new UsageError(withFlagName(err.message), hint);
    throw err;
  }
  return input;
}
