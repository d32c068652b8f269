// A domain: the tools an agent works with, what they mean and whom a run acts for. The runtime
// (workflows/, activities/, the CLI) reads tools only through these fields and hooks, never by
// name, so a new domain is a folder under domains/ and one line in each registry (domains/index.ts,
// domains/backends.ts).
import type { ToolDefinition } from './tools/tool';

/** Whom a run acts for: an opaque string id, checked and shown the domain's way. */
export interface PrincipalRule {
  /** What a principal looks like, for error messages ("a user id: a positive integer"). */
  describe: string;
  /** Why `principal` is not a valid id of this domain (one line); undefined when it is. */
  check: (principal: string) => string | undefined;
  /** How the decision payload names the principal to the model. */
  forModel: (principal: string) => Record<string, unknown>;
  /**
   * Whom the run acts for is learnt in the run, from a successful call of a tool marked
   * `authenticates` (a trusted tool result, never the model's or the customer's word); the run
   * input names no principal, and until then only tools that change nothing may run.
   */
  fromAuthentication?: boolean;
}

/**
 * A domain. `Services` is what its handlers use (support: its data and refunds service); the worker
 * builds them. A domain of pure functions over its data (domains/retail: `handler(db, args)`, a
 * `kind` of read or write) fits as tools over `{ db }` whose handler envelopes the function's
 * result, `effectful` for a write.
 */
export interface Domain<Services = unknown> {
  name: string;
  tools: readonly ToolDefinition<Services>[];
  /** Lines the system prompt adds for this domain's tools (rules the model must follow). */
  policyText: string;
  /** Every rule a tool of this domain may deny a call with (`policy_denied:<rule>`), explained. */
  policyRules: Readonly<Record<string, string>>;
  principal: PrincipalRule;
  /**
   * Each conversation (a run and its continue-as-new chain) has its own world: the state its tools
   * read and write and its effects' keys belong to the conversation (`<workflow id>/<first run id>`),
   * so a new run under a reused workflow id starts afresh instead of finding another's effects.
   * Absent: keys are per workflow id (support: a re-run under the same id finds the first refund).
   */
  statePerConversation?: boolean;
}

/**
 * A domain's Node side: how a worker (or the MCP server) builds the services its handlers use,
 * opening its systems of record from the environment unless `given` holds them (tests, the eval).
 * It lives in the domain's backend/ and is listed in domains/backends.ts; the workflow never sees it.
 */
export interface DomainBackend<Services = unknown, Given = unknown> {
  domain: Domain<Services>;
  services(given: Given): Services;
  /** Drill: the domain's reconcile lookups fail (the system of record does not answer). */
  lookupFails?: () => boolean;
}
