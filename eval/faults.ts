// The faults an evaluation scenario injects into the eval worker's tools (eval/fault-interceptor.ts
// for calls, eval/world.ts for a refund's commit), and the per-run file the eval harness writes for
// each run. Shared by the harness (which validates scenario files against it) and the eval worker
// (eval/worker.ts, which reads it).
import { z } from 'zod';

export const TOOL_FAULT_KINDS = [
  /** the activity throws a retryable error on its first `attempts` attempts */
  'error',
  /** the activity hangs, without heartbeats, past its timeouts on its first `attempts` attempts */
  'timeout',
  /** the activity waits `ms` before it runs */
  'slow',
  /** the tool answers `data` (default: a broken record) instead of its real answer */
  'malformed',
  /** the tool answers `bytes` bytes of filler (the envelope must cap it) */
  'oversized',
  /** the tool answers `data` (an older record than the source of truth) */
  'stale',
  /** the tool answers `data` that contradicts another tool's answer */
  'conflicting',
  /** the tool answers `data`, or an empty result */
  'empty',
  /** an effect: the first attempt hangs after planning, before the commit (no heartbeats) */
  'timeout_before_commit',
  /** an effect: the first attempt hangs after the commit, before it reports (no heartbeats) */
  'timeout_after_commit',
] as const;
export type ToolFaultKind = (typeof TOOL_FAULT_KINDS)[number];

export const toolFaultSchema = z.strictObject({
  tool: z.string().min(1),
  kind: z.enum(TOOL_FAULT_KINDS),
  /** Only the call made at this step (default: every call of the tool). */
  step: z.number().int().positive().optional(),
  /** error, timeout: how many first attempts fail (default 1; more than a tool's attempts: all of them). */
  attempts: z.number().int().positive().max(100).optional(),
  /** slow: the delay; timeout_*_commit: how long the attempt hangs (default 4000). */
  ms: z.number().int().nonnegative().max(120_000).optional(),
  /** oversized: how many bytes of filler (default 100000). */
  bytes: z.number().int().positive().max(5_000_000).optional(),
  /** malformed, stale, conflicting, empty: the answer's data, and whether it says ok (default true). */
  data: z.unknown().optional(),
  ok: z.boolean().optional(),
});
export type ToolFault = z.infer<typeof toolFaultSchema>;

/** `<AGENT_EVAL_DIR>/<workflow id>.json`: what one evaluated run's tools see. */
export interface EvalRunFile<Data = unknown> {
  /** The domain's data for this run (the support domain: domains/support/data.ts). */
  data: Data;
  faults: ToolFault[];
}

/** Faults that hit a refund's commit; the rest hit a tool call as a whole. */
export const COMMIT_FAULTS: readonly ToolFaultKind[] = ['timeout_before_commit', 'timeout_after_commit'];

/** A workflow id as a file name (ids may hold characters a file name should not). */
export function evalRunFileName(workflowId: string, ext: 'json' | 'sqlite'): string {
  return `${encodeURIComponent(workflowId)}.${ext}`;
}
