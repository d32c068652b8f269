// The keys of a tools/call request's `_meta` this project reads and writes: the same names on both
// sides (the runtime's MCP client sends them, the domain server reads them).
export const MCP_META = {
  /** The call's idempotency key: a retried call with the same key is applied at most once. */
  idempotencyKey: 'idempotency_key',
  /** Whose records the call works on (retail: the conversation's database); default: the MCP session's. */
  runKey: 'run_key',
  /** Whom the call acts for, in a domain whose principal the operator names (support). */
  principal: 'principal',
} as const;
