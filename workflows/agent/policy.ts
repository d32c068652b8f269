// The principal-aware policy gate. A run belongs to one principal (AgentInput.principal, an opaque
// id); this decides whether a schema-valid tool call is within what that principal may have done
// for them. The runtime knows two things about a tool here, both from its definition: which
// argument names whom the call is about (it must be the principal), and the tool's own policy
// hook. Pure and deterministic: the facts come from the run's own history.
import { specOf } from '../../common/tools/tool-catalog';
import type { PolicyContext, PolicyDecision, ToolRegistry, ToolSpec } from '../../common/tools/tool-catalog';
import type { EffectEntry, HistoryEntry } from '../../common/types';
import { confirmedUsd } from './effects';

export type { PolicyContext, PolicyDecision } from '../../common/tools/tool-catalog';

/** The rule the runtime enforces itself; a tool's hook adds its domain's rules (Domain.policyRules). */
export const PRINCIPAL_RULES = {
  other_user:
    "the call is about another principal than the run's (the tool's principal argument, or the owner of the object it changes)",
  not_authenticated:
    'the call changes something, is about a person or returns what names one, before the run has authenticated the customer (domains whose principal comes from authentication)',
} as const;

const ALLOWED: PolicyDecision = { allowed: true };

/** `args` are the schema-validated arguments (the gateway checks the schema first). */
export function checkPrincipalPolicy(
  spec: ToolSpec | undefined,
  args: Record<string, unknown>,
  ctx: PolicyContext,
): PolicyDecision {
  if (!spec) return ALLOWED;
  const arg = spec.principalArg;
  // Before authentication only look-ups that change nothing and name nobody run: an order id alone
  // must not reveal whose it is (its owner's id and zip are what authenticates them).
  if (ctx.principal === undefined && (spec.effectful || spec.needsConsent || spec.namesPerson || arg !== undefined))
    return { allowed: false, rule: 'not_authenticated' };
  if (arg !== undefined && arg in args && String(args[arg]) !== ctx.principal)
    return { allowed: false, rule: 'other_user' };
  return spec.policy ? spec.policy(args, ctx) : ALLOWED;
}

/** The policy as a run applies it at this moment: to its principal, from its history and its confirmed effects. */
export function runPolicy(
  registry: ToolRegistry,
  run: { principal: string | undefined; history: HistoryEntry[]; effects: readonly EffectEntry[] },
  name: string,
  args: Record<string, unknown>,
): PolicyDecision {
  return checkPrincipalPolicy(specOf(registry, name), args, {
    principal: run.principal,
    history: run.history,
    nowMs: Date.now(),
    confirmedUsd: confirmedUsd(run.effects),
  });
}
