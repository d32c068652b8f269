// The policy gateway: decides whether a validated tool action may run. Pure and deterministic,
// in the seeds' order: tool-call count -> allowlist (deny by default) -> registry -> argument
// schema -> loop detection (same tool + same args, in any key order).
import { argsHash } from './hash';
import type { StopReason } from './stop-reasons';
import { toolStop } from './stop-reasons';
import type { ToolSpec } from './tool-catalog';

export interface GatewayContext {
  maxToolCalls: number;
  allow: readonly string[];
  registry: Readonly<Record<string, ToolSpec>>;
  /** Tool calls already made in this run. */
  toolCalls: number;
  /** Signatures (`name:argsHash`) of calls already made. */
  seenCalls: readonly string[];
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

  // The loop check uses the normalised arguments, so {"query":" refund "} repeats {"query":"refund"}.
  const normalisedHash = argsHash(parsed.data);
  const signature = `${name}:${normalisedHash}`;
  if (ctx.seenCalls.includes(signature)) return { allowed: false, reason: 'loop_detected', argsHash: normalisedHash };
  return { allowed: true, name, args: parsed.data, argsHash: normalisedHash, signature };
}
