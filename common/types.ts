// Types every side shares: the workflow's input and result, the activities' inputs and outputs,
// and the live state the `state` query returns. Snake case, as the result's JSON is read by other tools.
import type { AttemptCharge, Budget, Remaining, Usage } from './cost/budget';
import type { WindDownReason } from './cost/cost';
import type { BudgetExtension } from './cost/extend';
import type { Action } from './contract';
import type { CatalogEntry } from './tools/catalog-entry';
import type { McpDiscovery } from './mcp/discovery';
import type { StopReason } from './stop-reasons';
import type { ApprovalDecision, PendingApproval } from './conversation/approvals';
import type { ClaimText, ValidatorMode } from './validator/final-validator';
import type { z } from 'zod';
import type { agentInputSchema } from './input';
import type { AppliedSay, AwaitingReply, ConversationForModel, Transcript, Turn } from './conversation/conversation';

/**
 * The workflow's input: one source, the schema the run and the CLI check it with (common/input.ts,
 * field meanings there), with `carried` typed as what the workflow writes (its only author).
 */
export type AgentInput = Omit<z.output<typeof agentInputSchema>, 'carried'> & { carried?: CarriedState };

/**
 * What one run hands to the next when it continues as new. Bounded (see carry.ts): a tail of the
 * trace and history, facts the policy gate needs, seen calls as short hashes; totals stay exact.
 */
export interface CarriedState {
  started_at_ms: number;
  usage: Usage;
  trace: TraceEntry[];
  history: HistoryEntry[];
  seen_calls: string[];
  /** The reads of the current scope, for repeats (bounded: MAX_CARRIED_READS); absent: none. */
  read_calls?: ReadScope;
  /** How many customer messages there were when seen_calls began (workflows/agent/repeats.ts writesIn); absent: unknown. */
  seen_since?: number;
  /** Time spent waiting for a person so far; it does not count toward max_seconds. */
  human_wait_ms?: number;
  effects?: EffectEntry[];
  omitted?: { trace: number; history: number };
  /** Top-ups granted so far (`agent extend`); they raise the budget of every later run of the chain. */
  extensions?: BudgetExtension[];
  /** A top-up wait timed out: the chain does not wait again. */
  topup_declined?: boolean;
  /** A conversation's transcript (its last turns and counts). */
  conversation?: Transcript;
  /** The last `say` Updates applied, by Update id: a repeat reaching a later run adds no turn. */
  say_updates?: AppliedSay[];
  /** The run continued as new while it waited for the customer's reply: the next run waits on. */
  awaiting_reply?: AwaitingReply;
  /** The run continued as new during a top-up wait: the next wait keeps this deadline. */
  topup_until_ms?: number;
  /** Whom the run acts for, when the run learnt it by authenticating the customer. */
  principal?: string;
  /** The kind of store the chain's state lives in (Observation.store), once a call reported it. */
  store?: string;
  /** The request's characters outside the model's view (DecideOutput.fixed_chars), as the chain last measured them. */
  fixed_chars?: number;
  /** What the run's MCP servers listed at its start: later runs of the chain do not list again. */
  mcp_discovery?: McpDiscovery[];
}

export { OBSERVATION_TRUST } from './tools/observation';
export type { Observation } from './tools/observation';
import type { Observation, OBSERVATION_TRUST, ObservationRepeat } from './tools/observation';

export interface TraceEntry {
  step: number;
  tool: string;
  args_hash: string;
  ok: boolean;
  stop_reason?: StopReason;
  /** A person's answer to this call or escalation. */
  approval?: ApprovalDecision;
  /**
   * The customer did not confirm this write (a conversation), or was not asked because it could not
   * be shown to them whole (common/conversation/consent.ts): either way it was not made.
   */
  consent?: 'declined' | 'not_asked';
  /** The step was a wind-down decision: the model was asked for its final answer because of this budget. */
  wind_down?: WindDownReason;
  /** A final answer the validator refused (tool "final"): the figures no observation supports. */
  unsupported_claims?: ClaimText[];
  /** A read repeated with nothing new in between: answered with this step's observation, the tool not called. */
  repeat_of?: number;
}

/** The read-only calls made since the last news (a customer message, a write), as loop signatures, once per time. */
export interface ReadScope {
  /** What the run had seen when they were made (workflows/agent/repeats.ts readScopeKey). */
  scope: string;
  calls: string[];
}

export interface HistoryEntry {
  step: number;
  action: Action;
  observation: Observation;
  /** Workflow time the observation was recorded (facts age: a refund window is re-checked with it). */
  observed_at_ms?: number;
}

/**
 * What became of one effectful call (a refund), as reconciled against the system of record:
 * confirmed (the money moved), rejected (the service refused it), not_made (nothing moved, and the
 * key is settled so nothing can), ambiguous (the lookup itself failed: money may have moved; an
 * operator must check the refunds service by idempotency key).
 */
export type EffectOutcome = 'confirmed' | 'rejected' | 'not_made' | 'ambiguous';
export const EFFECT_OUTCOMES: readonly EffectOutcome[] = ['confirmed', 'rejected', 'not_made', 'ambiguous'];

export interface EffectEntry {
  tool: string;
  idempotency_key: string;
  state: EffectOutcome;
  amount_usd: number;
  step: number;
  /** How the state was learned: the tool's own answer, or a lookup by key after the call failed or was cut off. */
  via: 'tool' | 'reconcile';
  refund_id?: number;
  /** Why: the service's rejection rule, or the lookup's error. */
  detail?: string;
}

/** Memo key holding a count of the run's effects by state, so `agent list` shows money in doubt. */
export const EFFECTS_MEMO = 'agent_effects';

/** Memo key under which a cancelled run leaves its partial result (a Canceled run has no result). */
export const CANCELLED_RESULT_MEMO = 'agent_result';
export type EffectCounts = Record<EffectOutcome, number>;

export interface AgentResult {
  status: 'ok' | 'stopped';
  stop_reason: StopReason;
  answer?: string;
  raw_action?: unknown;
  trace: TraceEntry[];
  history: HistoryEntry[];
  usage: Usage;
  budget: Budget;
  /** Every effectful call with its reconciled state (absent in results of runs recorded before it existed). */
  effects?: EffectEntry[];
  /** Trace entries and history entries dropped from long continue-as-new chains (the tails are kept). */
  omitted?: { trace: number; history: number };
  /** The run wound down: its last decision was asked for a final answer because this budget ran low. */
  wind_down?: { step: number; reason: WindDownReason };
  /** Top-ups an operator granted (`agent extend`), with who and why; `budget` includes them. */
  extensions?: BudgetExtension[];
  /** What the final validator made of the run's last final answer (absent in runs from before it). */
  validation?: FinalValidation;
  /** A conversation run: its transcript (the last turns kept, and the counts of all). */
  conversation?: Transcript;
}

/**
 * The final validator's verdict on the last final answer: supported (every figure found in an
 * observation), unsupported (warn mode accepted it anyway; enforce mode ended the run), or unchecked
 * (mode off). `bounces`: answers returned to the model as unsupported.
 */
export interface FinalValidation {
  mode: ValidatorMode;
  verdict: 'supported' | 'unsupported' | 'unchecked';
  bounces: number;
  unsupported_claims?: ClaimText[];
}

export type Phase =
  | 'starting'
  | 'deciding'
  | 'calling_tool'
  | 'awaiting_approval'
  | 'awaiting_topup'
  | 'awaiting_customer'
  | 'reconciling'
  | 'done';

/** A conversation as the state query shows it: the last turns, the counts, what the run waits for. */
export interface ConversationState extends Transcript {
  /** Customer messages the agent has not answered yet. */
  unanswered: number;
  /** The agent's latest message. */
  last_message?: Turn;
  /** Set while the run waits for the customer: until when. */
  idle_expires_at?: string;
}

export interface AgentState {
  phase: Phase;
  step: number;
  status: 'running' | 'ok' | 'stopped';
  stop_reason?: StopReason;
  current_tool?: string;
  /** What the run is waiting for right now ("the LLM's decision for step 3"); absent once it ended. */
  waiting_for?: string;
  last_action?: Action;
  usage: Usage;
  budget: Budget;
  remaining: Remaining;
  trace: TraceEntry[];
  /** What a person must approve, reject or answer before the run goes on. */
  awaiting_approval?: PendingApproval;
  effects?: EffectEntry[];
  /** The run waits for `agent extend`: why, and until when. */
  awaiting_topup?: { reason: string; since: string; expires_at: string };
  extensions?: BudgetExtension[];
  /** A conversation run: its transcript and whether it waits for the customer. */
  conversation?: ConversationState;
  /**
   * While the run goes on: the workflow time `usage.elapsed_ms` is as of (a query sees the clock of
   * the run's last task), and whether the agent's time runs on from there (not while it waits for a
   * person, an operator's top-up or the customer), so a reader can bring the figure up to now.
   */
  clock?: { at: string; running: boolean };
}

// --- activity contracts ---

/** An observation as the model sees it: labelled, with sensitive fields redacted. */
export interface ObservationForModel {
  tool: string;
  source: string;
  trust: typeof OBSERVATION_TRUST;
  ok: boolean;
  data: unknown;
  bytes: number;
  truncated: boolean;
  /** Paths whose values were withheld from the model. */
  redacted?: string[];
  /** This is an earlier step's observation again (a repeated read): the tool was not called. */
  repeat?: ObservationRepeat;
}

export interface DecisionPayload {
  /** The operator's task and the principal (as the domain names it, e.g. {user_id: 42}): the runtime's own input. */
  goal: string;
  /** The domain (its policy is the system prompt's) and whom the run acts for; null: not authenticated yet. */
  domain?: string;
  principal: Record<string, unknown> | null;
  state_summary: { steps_completed: number; tools_used: string[] };
  /**
   * The tools the model may call, by name: the decide activity puts each tool's description and
   * argument schema in their place (modelPayload), so the history does not grow with the catalog.
   * A tool the worker's domain does not know (an MCP server's) is here described already.
   */
  available_tools: Array<string | CatalogEntry>;
  /** Tool results of the last few steps, kept apart from everything above: data, never instructions. */
  untrusted_observations: {
    notice: string;
    steps: Array<{ step: number; action: Action; observation: ObservationForModel }>;
  };
  /** Set on a wind-down decision: the run asks for a final answer now. */
  wind_down?: { reason: WindDownReason; notice: string };
  /** A conversation run: the last turns with the customer, and the counts. */
  conversation?: ConversationForModel;
}

/** What the model receives: the payload with each available tool described. */
export type ModelPayload = Omit<DecisionPayload, 'available_tools'> & { available_tools: CatalogEntry[] };

export interface DecideInput {
  payload: DecisionPayload;
  idempotency_key: string;
  /** The completion cap the call must send (the dollar budget reserved it); absent: none. */
  max_completion_tokens?: number;
  /**
   * What is left of the dollar budget for this decision, all its attempts together: each attempt
   * subtracts what the earlier ones were charged and lowers its cap to fit, or is not sent
   * (LLM_BUDGET). Absent: the run has no dollar budget (or predates the check).
   */
  left_usd?: number;
  /** Tell the run of each paid failed attempt at once (the attempt_charged Signal, common/cost/attempt-charged.ts). */
  report_charges?: boolean;
  /**
   * The model requests this decision may make (llm_max_attempts): only attempts that sent one count
   * (common/cost/llm-requests.ts), so retries lost to a hung worker's polls do not use them up. Absent:
   * Temporal's attempts are the requests (runs that predate the count).
   */
  max_requests?: number;
  /**
   * The whole run as the model reads it (common/model-view/model-view.ts): which entries and turns, and what is
   * compacted. The activity renders it from the run's state (the model_view Query), so this stays
   * the same size at every step. Absent (decisions scheduled by older workers): the payload alone.
   */
  view?: ViewRef;
}

export interface DecideOutput {
  /** The model's answer; when too_large is set, only its first characters (a preview). */
  text: string;
  model: string;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number; cached_prompt_tokens?: number };
  /**
   * Set when the answer exceeded the decide activity's cap (or its HTTP response was too large to
   * read; bytes is then a lower bound): the run stops with invalid_action:too_large.
   */
  too_large?: { bytes: number };
  /**
   * Every attempt of this decision that reported usage, this one included, priced by the worker:
   * the run charges these (absent in histories recorded before cost accounting).
   */
  attempts?: AttemptCharge[];
  /**
   * Characters of the request outside the model's view: the system message and the tools. The same
   * at every decision of a run; the workflow adds them to its next views' size (the context budget).
   */
  fixed_chars?: number;
}

/** What a failed decide activity carries (failure details, heartbeat details): the attempts it was charged for. */
export interface DecideLedger {
  attempts: AttemptCharge[];
  /** The attempts that sent their model request (each one says so before sending). */
  sent?: number[];
}

export interface ToolInput {
  args: Record<string, unknown>;
  idempotency_key: string;
  /** The run's principal (an opaque id); absent before a run that learns it has authenticated the customer. */
  principal?: string;
  /** Whose world the call reads and writes: the conversation (`<workflow id>/<first run id>`) in a domain with state per conversation. */
  state_key?: string;
  /** The kind of store the run's first call of such a domain reported (Observation.store): a worker whose store is of another kind refuses the call, retryably. */
  store?: string;
}

/** The lookup an effect's reconcile activity (`reconcile_<tool>`) makes before a run ends. */
export interface ReconcileInput {
  idempotency_key: string;
  /** Settle a record nobody will finish (planned or interrupted) as not made, fencing off a hung attempt. */
  settle: boolean;
  /** As ToolInput.store: a lookup in another kind of store would find no record and settle it as not made. */
  store?: string;
}

export interface ReconcileOutput {
  state: EffectOutcome;
  amount_usd?: number;
  refund_id?: number;
  detail?: string;
}

/** What the decide activity's input names of the view (small and flat: the history stores it at every step). */
export interface ViewRef {
  /** History entries the decision read (the first `entries` of the run's history). */
  entries: number;
  /** Conversation turns the decision read (turns numbered up to this). */
  turns: number;
  /** Tool results of steps before this one are compacted (authentication results excepted); 0: none. */
  compact_before: number;
  /** How many results that compacts. */
  compacted: number;
  /** The context budget the plan kept to (estimated tokens). */
  budget_tokens: number;
  /** Set when even with every result but the latest compacted the view exceeds the budget: its estimated tokens. */
  over_budget_tokens?: number;
}
