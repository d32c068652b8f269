// A domain: the tools an agent works with, what they mean and whom a run acts for. The runtime
// (workflows/, activities/, the CLI) reads tools only through these fields and hooks, never by
// name, so a second domain is a folder under domains/ and one line where the worker wires it.
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
}
