// What a tool is: its name, what the model is told, the zod schema of its arguments (enforced by
// the gateway, shown to the model as JSON Schema), how its activity runs, what it means to the
// runtime (an effect, an approval, a principal rule, a reconcile lookup, facts an answer must
// match) and its handler. Tool files are bundled into the workflow (the workflow reads the
// options and the policy hooks), so a handler never imports Node or the activity SDK: it gets
// everything outside itself from a ToolContext that activities/ builds for each call.
import type { z } from 'zod';
import type { Observation } from './observation';
import type { CatalogEntry } from './catalog-entry';
import type { HistoryEntry, ReconcileInput, ReconcileOutput, ToolInput } from '../types';

/** A policy verdict; a denial ends the run with `policy_denied:<rule>`. */
export type PolicyDecision = { allowed: true } | { allowed: false; rule: string };

/** What a tool's policy hook may rely on: the run's principal and its own recorded facts. */
export interface PolicyContext {
  /** The run's principal (an opaque id); undefined until a run that learns it has authenticated the customer. */
  principal: string | undefined;
  /** The run's history so far: the only source of facts. */
  history: readonly HistoryEntry[];
  /** Workflow time now; absent in callers without a clock (facts then do not age). */
  nowMs?: number;
  /** USD this run's effects moved for sure; absent: the hook sums it from the history. */
  confirmedUsd?: number;
}

/** A tool's own policy: pure and deterministic (it runs in the workflow), on schema-valid arguments. */
export type ToolPolicy = (args: Record<string, unknown>, ctx: PolicyContext) => PolicyDecision;

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
  /**
   * A read-only tool runs as a local activity (in the workflow's own task: no server round trip to
   * schedule and complete it) unless this is false: a read that may take seconds (a remote search)
   * says so here and runs as a normal activity. Ignored for an effect, which is always a normal one.
   */
  localActivity?: boolean;
  /** The run pauses until an operator approves or rejects this exact call (`agent approve|reject`). */
  needsApproval?: boolean;
  /** Dot paths into the tool's observation data that the model and the logs never see (`*` = any key). */
  sensitive?: readonly string[];
  /** Free-text arguments: loop detection compares them without case, width or spacing differences. */
  freeText?: readonly string[];
  /**
   * The argument that names whom the call is about: it must equal the run's principal
   * (`policy_denied:other_user`), and the call needs one (`policy_denied:not_authenticated` before it).
   */
  principalArg?: string;
  /**
   * Its result names a person (their id, address, orders): it needs the run's principal
   * (`policy_denied:not_authenticated` before authentication) and its handler returns only the
   * principal's own records (another's is refused as not found). An `authenticates` tool is the exception:
   * it is how the principal is learnt, from what only the customer should know.
   */
  namesPerson?: boolean;
  /** Further rules the call must pass before it runs (and again once approved). */
  policy?: ToolPolicy;
  /**
   * Its results state facts (amounts, plans) a final answer repeats: a run allowed this tool
   * enforces the final validator unless the input says otherwise (it warns otherwise).
   */
  statesFacts?: boolean;
  /**
   * Identifies the customer: a successful result whose data is a string is whom the run acts for
   * from then on (the first one; a domain whose principal rule says `fromAuthentication`).
   */
  authenticates?: boolean;
  /**
   * The customer must say yes to this exact call before it runs: the workflow shows it in the
   * conversation and waits for their next message (only a conversation run may allow it).
   */
  needsConsent?: boolean;
  /**
   * The argument naming an object the principal must own (an order): the tool's `owner` hook looks
   * its owner up before the customer is asked, and another owner is `policy_denied:other_user`.
   */
  ownedArg?: string;
  /**
   * An effect whose observation reports its result rather than a record: ok means it was made, ok
   * false with an `error` that the system of record refused it (read as ambiguous otherwise).
   */
  outcomeByOk?: boolean;
  /** A successful call ends the run with this reason (a hand-off to a person). */
  endsRun?: 'transferred';
  /**
   * Its effect is looked up by key at the server that made it (an MCP server that answers
   * `_meta.reconcile`), where a domain tool has its `reconcile` hook.
   */
  reconcileByKey?: boolean;
}

/** What the workflow and the gateway read: everything but the handlers. */
export interface ToolSpec extends ToolOptions {
  name: string;
  description: string;
  /** Enforced by the gateway; strict, so unknown arguments are rejected. */
  args: z.ZodType<Record<string, unknown>>;
  /**
   * What the model is shown, recorded with the run instead of derived from `args` (an MCP server's
   * tool: its listed JSON Schema); it travels in the decision, as the worker's domain does not know it.
   */
  catalogEntry?: CatalogEntry;
}

/**
 * Fault injection for effects (tests, drills). On an effect's first attempt it stops heartbeating
 * and waits this long, as a worker that hangs (or is killed) at that point would; Temporal then
 * times the attempt out and the next attempt must reconcile. 0 (default) = off.
 */
export interface EffectFaults {
  /** After the effect is planned, before it is committed ("timeout before commit"). */
  pauseBeforeCommitMs: number;
  /** After the effect is committed, before the activity reports back ("timeout after commit"). */
  pauseAfterCommitMs: number;
}

/** Everything a handler may use beyond its arguments, provided per call by activities/. */
export interface ToolContext<Services = unknown> {
  /** The domain's services (its data, its systems of record). */
  services: Services;
  /** Wraps the tool's result with its source, the trust label and the size and nesting caps. */
  envelope: (source: string, ok: boolean, data: unknown) => Observation;
  /** The activity's attempt, from 1. */
  attempt: number;
  /** The details of the last heartbeat an earlier attempt of this call sent (undefined on the first). */
  earlierHeartbeat: unknown;
  /** The run the call belongs to. */
  workflowId: string;
  /** Heartbeats (with the callback's details), the first at once, until the returned function is called. */
  startHeartbeats: (details: () => unknown) => () => void;
  /** Waits ms without heartbeating (a hung attempt); ends early when the activity is cancelled. */
  stall: (ms: number) => Promise<void>;
  /** Aborted when the activity is cancelled (a kill switch, a deadline) or the worker shuts down. */
  cancellationSignal: AbortSignal;
  /** Throws the cancellation the runtime reports once the activity is cancelled; returns otherwise. */
  throwIfCancelled: () => void;
  /** A failure the runtime does not retry (the call failed for good), with its error type. */
  failForGood: (message: string, type: string) => Error;
  /** A failure the runtime retries, with its error type. */
  failRetryable: (message: string, type: string) => Error;
  /**
   * Whether the run's cancel, or this call's (a deadline cancels the call), is recorded on the
   * server. The workflow learns of a cancel only at its next workflow task, which a hung worker can
   * delay, and a retry learns of its call's cancel only from a heartbeat; an effect asks before it commits.
   */
  runCancelRequested: () => Promise<boolean>;
  /** Fault injection for effects (tests, drills); all zero in normal operation. */
  faults: EffectFaults;
}

/** What a reconcile lookup may use: the domain's services. */
export interface ReconcileContext<Services = unknown> {
  services: Services;
}

export interface ToolDefinition<Services = unknown> extends ToolSpec {
  /** Runs the call: `args` have passed the schema; `input` carries the idempotency key and principal. */
  // Method syntax: a domain's tools (typed by their services) are tools of the runtime's Domain.
  handler(args: Record<string, unknown>, ctx: ToolContext<Services>, input: ToolInput): Promise<Observation>;
  /**
   * The lookup by idempotency key the workflow makes before a run ends while this effect's
   * outcome is unknown; with `settle`, an unfinished record is closed as not made.
   */
  reconcile?(input: ReconcileInput, ctx: ReconcileContext<Services>): Promise<ReconcileOutput>;
  /** Whom the object named by `ownedArg` belongs to (a principal id), or null when there is no such object. */
  owner?(args: Record<string, unknown>, ctx: ReconcileContext<Services>): Promise<string | null>;
}

/** One tool, checked: the handler's arguments are the schema's output. */
export function defineTool<Services, Schema extends z.ZodType<Record<string, unknown>>>(
  tool: Omit<ToolSpec, 'args'> & {
    args: Schema;
    handler: (args: z.output<Schema>, ctx: ToolContext<Services>, input: ToolInput) => Promise<Observation>;
    reconcile?: (input: ReconcileInput, ctx: ReconcileContext<Services>) => Promise<ReconcileOutput>;
    owner?: (args: z.output<Schema>, ctx: ReconcileContext<Services>) => Promise<string | null>;
  },
): ToolDefinition<Services> {
  return tool as unknown as ToolDefinition<Services>;
}
