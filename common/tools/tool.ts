// What a tool is: its name, what the model is told, the zod schema of its arguments (enforced by
// the gateway, shown to the model as JSON Schema), how its activity runs, and its handler.
// Tool files are bundled into the workflow (the workflow reads the options), so a handler never
// imports Node or the activity SDK: it gets everything outside itself from a ToolContext that
// activities/ builds for each call.
import type { z } from 'zod';
import type { Observation } from '../observation';
import type { ToolInput } from '../types';
import type { RefundFaults, RefundLedger } from './refund-ledger';
import type { DataSource } from './support-data';

/** How the tool's activity is run, and what the runtime must know about its arguments and results. */
export interface ToolOptions {
  /** Per-attempt timeout of the tool's activity. */
  timeoutSeconds: number;
  maxAttempts: number;
  /**
   * Changes the world (not only reads it): the activity heartbeats, a cancel waits for it to
   * acknowledge, and it must honour its idempotency key.
   */
  effectful?: boolean;
  /** The run pauses until an operator approves or rejects this exact call (`agent approve|reject`). */
  needsApproval?: boolean;
  /** Dot paths into the tool's observation data that the model and the logs never see (`*` = any key). */
  sensitive?: readonly string[];
  /** Free-text arguments: loop detection compares them without case, width or spacing differences. */
  freeText?: readonly string[];
}

/** What the workflow and the gateway read: everything but the handler. */
export interface ToolSpec extends ToolOptions {
  name: string;
  description: string;
  /** Enforced by the gateway; strict, so unknown arguments are rejected. */
  args: z.ZodType<Record<string, unknown>>;
}

/** Everything a handler may use beyond its arguments, provided per call by activities/. */
export interface ToolContext {
  /** The support data (users, billing, policies). */
  data: DataSource;
  /** The refunds service, opened on first use. */
  refunds: () => RefundLedger;
  /** Wraps the tool's result with its source, the trust label and the size and nesting caps. */
  envelope: (source: string, ok: boolean, data: unknown) => Observation;
  /** The activity's attempt, from 1. */
  attempt: number;
  /** The run the call belongs to. */
  workflowId: string;
  /** Heartbeats (with the callback's details) until the returned function is called. */
  startHeartbeats: (details: () => unknown) => () => void;
  /** Waits ms without heartbeating (a hung attempt); ends early when the activity is cancelled. */
  stall: (ms: number) => Promise<void>;
  /** Aborted when the activity is cancelled (a kill switch, a deadline) or the worker shuts down. */
  cancellationSignal: AbortSignal;
  /**
   * Whether the run's cancel, or this call's (a deadline cancels the call), is recorded on the
   * server. The workflow learns of a cancel only at its next workflow task, which a hung worker can
   * delay, and a retry learns of its call's cancel only from a heartbeat; an effect asks before it commits.
   */
  runCancelRequested: () => Promise<boolean>;
  /** Fault injection for effects (tests, drills); all zero in normal operation. */
  faults: RefundFaults;
}

export interface ToolDefinition<Args extends Record<string, unknown> = Record<string, unknown>> extends ToolSpec {
  /** Runs the call: `args` have passed the schema; `input` carries the idempotency key and principal. */
  handler: (args: Args, ctx: ToolContext, input: ToolInput) => Promise<Observation>;
}

/** One tool, checked: the handler's arguments are the schema's output. */
export function defineTool<Schema extends z.ZodType<Record<string, unknown>>>(
  tool: Omit<ToolSpec, 'args'> & {
    args: Schema;
    handler: (args: z.output<Schema>, ctx: ToolContext, input: ToolInput) => Promise<Observation>;
  },
): ToolDefinition {
  return tool as unknown as ToolDefinition;
}
