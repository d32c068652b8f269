// Which of a decision's Temporal attempts were model requests. A hung worker (SIGSTOP, a frozen VM)
// keeps its open activity polls, and each retry handed to one dies unrun: an attempt that never
// sent a request. So a decision gets more Temporal attempts than model requests, and each attempt
// says in its heartbeat, before it sends, that it is sending; the attempts after it read that from
// the heartbeat details Temporal carries from attempt to attempt (with the charges, DecideLedger).
// An attempt that sent and then died with its worker still counts, once its heartbeat got out.
// Pure code: the decide activity and its tests use it.

/** The attempts before `attempt` that said they were sending, from the decision's heartbeat details. */
export function sentBefore(details: unknown, attempt: number): number[] {
  const sent = (details as { sent?: unknown } | undefined)?.sent;
  if (!Array.isArray(sent)) return [];
  const earlier = sent.filter((a): a is number => Number.isSafeInteger(a) && a >= 1 && a < attempt);
  return [...new Set(earlier)].sort((a, b) => a - b);
}

/**
 * What an attempt may do, given the requests its decision already made and may make (undefined:
 * no count, every attempt sends and Temporal's own limit ends the retries): 'spent' sends nothing
 * and fails for good; 'last' sends the final request, so its failure is final too; 'send' may be retried.
 */
export function requestTurn(sent: readonly number[], maxRequests: number | undefined): 'send' | 'last' | 'spent' {
  if (maxRequests === undefined) return 'send';
  if (sent.length >= maxRequests) return 'spent';
  return sent.length + 1 >= maxRequests ? 'last' : 'send';
}
