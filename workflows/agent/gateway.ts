// The policy gateway: decides whether a validated tool action may run. Pure and deterministic,
// in the seeds' order: tool-call count -> allowlist (deny by default) -> registry -> argument
// schema -> principal policy (workflows/agent/policy.ts) -> loop detection (same tool + same args, in
// any key order). A read repeated with nothing new in between is let through as a repeat (the
// loop answers it from the earlier observation) up to `maxRepeats` times; a write in
// seenCalls is never repeated (the loop empties seenCalls at a new customer message: repeats.ts writesIn).
import { argsHash } from '../../common/tools/hash';
import type { StopReason } from '../../common/stop-reasons';
import { policyStop, toolStop } from '../../common/stop-reasons';
import type { ToolSpec } from '../../common/tools/tool-catalog';
import type { PolicyDecision } from './policy';

export interface GatewayContext {
  maxToolCalls: number;
  allow: readonly string[];
  registry: Readonly<Record<string, ToolSpec>>;
  /** Tool calls already made in this run. */
  toolCalls: number;
  /** Signatures (`name:argsHash`) of calls already made that may never be made again (writes). */
  seenCalls: readonly string[];
  /** Signatures of the read-only calls made since the last news (a customer message, a write), once per time. */
  readCalls?: readonly string[];
  /** How many times a read may be repeated with nothing new in between before it is a loop; default 0. */
  maxRepeats?: number;
  /** The principal policy, given the schema-valid arguments; absent = no principal checks. */
  policy?: (name: string, args: Record<string, unknown>) => PolicyDecision;
  /** What makes two calls "the same" for loop detection; default `name:argsHash`. */
  loopSignature?: (name: string, args: Record<string, unknown>) => string;
}

export type GatewayDecision =
  | {
      allowed: true;
      name: string;
      args: Record<string, unknown>;
      argsHash: string;
      signature: string;
      /** How many times this read was made since the last news: 0, a new call; more, a repeat. */
      repeat: number;
    }
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
  const loop: GatewayDecision = { allowed: false, reason: 'loop_detected', argsHash: normalisedHash };
  if (ctx.seenCalls.includes(signature)) return loop;
  const repeat = spec.effectful ? 0 : (ctx.readCalls ?? []).filter((seen) => seen === signature).length;
  if (repeat > (ctx.maxRepeats ?? 0)) return loop;
  return { allowed: true, name, args: parsed.data, argsHash: normalisedHash, signature, repeat };
}
