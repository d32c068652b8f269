// The policy gateway: decides whether a validated tool action may run. Pure and deterministic,
// in the seeds' order: tool-call count -> allowlist (deny by default) -> registry -> argument
// schema -> principal policy (workflows/policy.ts) -> loop detection (same tool + same args, in
// any key order).
import { argsHash } from '../common/hash';
import type { StopReason } from '../common/stop-reasons';
import { policyStop, toolStop } from '../common/stop-reasons';
import type { ToolSpec } from '../common/tool-catalog';
import type { PolicyDecision } from './policy';

export interface GatewayContext {
  maxToolCalls: number;
  allow: readonly string[];
  registry: Readonly<Record<string, ToolSpec>>;
  /** Tool calls already made in this run. */
  toolCalls: number;
  /** Signatures (`name:argsHash`) of calls already made. */
  seenCalls: readonly string[];
  /** The principal policy, given the schema-valid arguments; absent = no principal checks. */
  policy?: (name: string, args: Record<string, unknown>) => PolicyDecision;
  /** What makes two calls "the same" for loop detection; default `name:argsHash`. */
  loopSignature?: (name: string, args: Record<string, unknown>) => string;
}

export type GatewayDecision =
  | { allowed: true; name: string; args: Record<string, unknown>; argsHash: string; signature: string }
  | { allowed: false; reason: StopReason; argsHash: string };

export function checkToolCall(name: string, rawArgs: Record<string, unknown>, ctx: GatewayContext): GatewayDecision {
  const hash = argsHash(rawArgs);
  const deny = (reason: StopReason): GatewayDecision => ({ allowed: false, reason, argsHash: hash });

  if (ctx.toolCalls + 1 > ctx.maxToolCalls) return deny('max_tool_calls');
  if (!ctx.allow.includes(name)) return deny(toolStop.denied(name));
  const spec = Object.prototype.hasOwnProperty.call(ctx.registry, name) ? ctx.registry[name] : undefined;
  if (!spec) return deny(toolStop.missing(name));
  const parsed = spec.args.safeParse(rawArgs);
  if (!parsed.success) return deny(toolStop.badArgs(name));
  const policy = ctx.policy?.(name, parsed.data);
  if (policy && !policy.allowed) return deny(policyStop(policy.rule));

  // The loop check uses the normalised arguments, so {"query":" refund "} repeats {"query":"refund"}.
  const normalisedHash = argsHash(parsed.data);
  const signature = ctx.loopSignature ? ctx.loopSignature(name, parsed.data) : `${name}:${normalisedHash}`;
  if (ctx.seenCalls.includes(signature)) return { allowed: false, reason: 'loop_detected', argsHash: normalisedHash };
  return { allowed: true, name, args: parsed.data, argsHash: normalisedHash, signature };
}
