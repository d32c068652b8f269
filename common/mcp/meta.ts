// The keys of a tools/call request's `_meta` this project reads and writes: the same names on both
// sides (the runtime's MCP client sends them, the domain server reads them).
export const MCP_META = {
  /** The call's idempotency key: a retried call with the same key is applied at most once. */
  idempotencyKey: 'idempotency_key',
  /** Whose records the call works on (retail: the conversation's database); default: the MCP session's. */
  runKey: 'run_key',
  /** The run's chain (its first run id): a new run under the same workflow id is another run. */
  runChain: 'run_chain',
  /**
   * The HMAC of run key and chain under AGENT_MCP_RUN_SECRET: only with it does the server keep
   * (and give back) whom the run authenticated as; without it, authentication lasts the MCP session.
   */
  runProof: 'run_proof',
  /** Whom the call acts for, in a domain whose principal the operator names (support). */
  principal: 'principal',
  /**
   * A lookup, not a call: the server answers what the key's effect came to (a ReconcileOutput) and
   * runs nothing; with the value `settle`, a key it has no record of is recorded as not made.
   */
  reconcile: 'reconcile',
  /**
   * A lookup, not a call: whether the object the call's owned argument names is the principal's
   * (`{"owner": "principal" | "other" | null}`, null: no such object); runs nothing.
   */
  owner: 'owner',
} as const;

/** The `_meta.reconcile` value that closes a key nobody finished as not made (a later call with it then refuses). */
export const MCP_RECONCILE_SETTLE = 'settle';
