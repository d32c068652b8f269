// What a run hands to the next when it continues as new, bounded so that a run of any length
// stays far from Temporal's 2 MB payload limit: a tail of the trace and history, the facts the
// policy gate reads (the latest good observation of each tool), seen calls as short hashes.
// Totals (usage, effects, time) are carried exactly; what was dropped is counted.
import { seenCallHash } from '../../common/tools/hash';
import type { AgentInput, CarriedState, EffectEntry, HistoryEntry, ReadScope, TraceEntry } from '../../common/types';
import { MAX_CARRIED_READS } from './repeats';
import type { BudgetExtension } from '../../common/cost/extend';
import { EMPTY_USAGE } from '../../common/cost/budget';
import type { Usage } from '../../common/cost/budget';
import type { AppliedSay, AwaitingReply, Transcript } from '../../common/conversation/conversation';
import type { LoopState } from './run-loop';
import { authenticationEntry } from '../../common/conversation/authentication-entry';

export const CARRY_LIMITS = {
  /** Trace entries kept (the result of a longer run shows the last ones and a count). */
  trace: 200,
  /** History entries kept: more than the decision payload shows the model. */
  history: 20,
} as const;

export interface RunState {
  started_at_ms: number;
  usage: Usage;
  trace: readonly TraceEntry[];
  history: readonly HistoryEntry[];
  seen_calls: readonly string[];
  /** The reads of the current scope (workflows/agent/repeats.ts); absent: none. */
  read_calls?: ReadScope | undefined;
  seen_since?: number | undefined;
  human_wait_ms: number;
  effects: readonly EffectEntry[];
  omitted: { trace: number; history: number };
  /** A conversation's transcript: already bounded (common/conversation/conversation.ts keeps the last turns). */
  conversation?: Transcript | undefined;
  /** The conversation's last `say` Updates (bounded) and the reply it waits for, if it does. */
  say_updates?: AppliedSay[] | undefined;
  awaiting_reply?: AwaitingReply | undefined;
  /** Whom the run acts for when it learnt it by authentication (the input names it otherwise). */
  principal?: string | undefined;
  /** The run's authenticating tools: the entry `principal` came from is always carried. */
  authenticates?: readonly string[] | undefined;
  /** The kind of store the chain's state lives in, once a call reported it. */
  store?: string | undefined;
  /** The request's characters outside the model's view, as the last decision measured them. */
  fixed_chars?: number | undefined;
}

/** The loop's state at a run's start: fresh, or what the previous run of the chain carried. */
export function loopStateOf(carried: CarriedState | undefined, inputPrincipal?: string): LoopState {
  return {
    principal: inputPrincipal ?? carried?.principal,
    store: carried?.store,
    fixedChars: carried?.fixed_chars,
    usage: carried ? { ...carried.usage } : { ...EMPTY_USAGE },
    trace: carried ? [...carried.trace] : [],
    history: carried ? [...carried.history] : [],
    // Loop detection keeps short hashes.
    seenCalls: carried ? carried.seen_calls.map(seenCallHash) : [],
    reads: carried?.read_calls,
    seenSince: carried?.seen_since,
    effects: carried?.effects ? [...carried.effects] : [],
    windDowns: new Map(),
  };
}

/** The loop's part of what a run carries (the rest is the workflow's: its clock, its conversation, its top-ups). */
export function loopRunState(
  state: LoopState,
): Pick<
  RunState,
  'usage' | 'trace' | 'history' | 'seen_calls' | 'read_calls' | 'seen_since' | 'effects' | 'store' | 'fixed_chars'
> {
  return {
    usage: state.usage,
    trace: state.trace,
    history: state.history,
    seen_calls: state.seenCalls,
    read_calls: state.reads,
    seen_since: state.seenSince,
    effects: state.effects,
    store: state.store,
    fixed_chars: state.fixedChars,
  };
}

export function carryState(s: RunState): CarriedState {
  const trace = s.trace.slice(-CARRY_LIMITS.trace);
  const history = historyToCarry(s.history, authenticationEntry(s.history, s.principal, s.authenticates ?? []));
  return {
    started_at_ms: s.started_at_ms,
    usage: s.usage,
    trace,
    history,
    // Deduplicated: a set, carried as a list.
    seen_calls: [...new Set(s.seen_calls.map(seenCallHash))],
    // Kept with their repeats (a read made twice counts twice), the last ones.
    ...(s.read_calls
      ? { read_calls: { scope: s.read_calls.scope, calls: s.read_calls.calls.slice(-MAX_CARRIED_READS) } }
      : {}),
    ...(s.seen_since !== undefined ? { seen_since: s.seen_since } : {}),
    human_wait_ms: s.human_wait_ms,
    effects: [...s.effects],
    omitted: {
      trace: s.omitted.trace + (s.trace.length - trace.length),
      history: s.omitted.history + (s.history.length - history.length),
    },
    ...(s.conversation ? { conversation: s.conversation } : {}),
    ...(s.say_updates ? { say_updates: s.say_updates } : {}),
    ...(s.awaiting_reply ? { awaiting_reply: s.awaiting_reply } : {}),
    ...(s.principal !== undefined ? { principal: s.principal } : {}),
    ...(s.store !== undefined ? { store: s.store } : {}),
    ...(s.fixed_chars !== undefined ? { fixed_chars: s.fixed_chars } : {}),
  };
}

/** What the workflow adds to the loop's state when a run hands over to the next. */
export interface RunHandover {
  startedAtMs: number;
  waits: { humanWaitMs: number; topupDeclined: boolean; topupUntilMs?: number | undefined };
  omitted: { trace: number; history: number };
  conversation: Pick<RunState, 'say_updates' | 'awaiting_reply'> & { transcript: Transcript | undefined };
  /** The run's authenticating tools (the entry its principal came from is always carried). */
  authenticates: readonly string[];
  /** Top-ups granted so far. */
  extensions: readonly BudgetExtension[];
}

/** The next run's input: this one's, with the bounded state it carries and the top-ups granted so far. */
export function nextRunInput(input: AgentInput, state: LoopState, run: RunHandover): AgentInput {
  const { conversation, waits } = run;
  const carried = carryState({
    ...loopRunState(state),
    started_at_ms: run.startedAtMs,
    human_wait_ms: waits.humanWaitMs,
    omitted: run.omitted,
    conversation: conversation.transcript,
    say_updates: conversation.say_updates,
    awaiting_reply: conversation.awaiting_reply,
    // A principal the input names stays the input's; one learnt by authentication is carried.
    principal: input.principal === undefined ? state.principal : undefined,
    authenticates: run.authenticates,
  });
  return {
    ...input,
    carried: {
      ...carried,
      ...(run.extensions.length > 0 ? { extensions: [...run.extensions] } : {}),
      ...(waits.topupDeclined ? { topup_declined: true } : {}),
      ...(waits.topupUntilMs !== undefined ? { topup_until_ms: waits.topupUntilMs } : {}),
    },
  };
}

/**
 * The tail, plus the latest successful observation of each tool that fell out of it (facts the gate
 * needs) and the authentication the principal came from (a later call of the same tool may have
 * looked up someone else).
 */
function historyToCarry(history: readonly HistoryEntry[], auth: HistoryEntry | undefined): HistoryEntry[] {
  const tail = history.slice(-CARRY_LIMITS.history);
  const older = history.slice(0, history.length - tail.length);
  const pinned = new Map<string, HistoryEntry>();
  for (const entry of older) {
    const { action } = entry;
    if (action.kind !== 'tool' || !entry.observation.ok) continue;
    if (tail.some((t) => t.action.kind === 'tool' && t.action.name === action.name && t.observation.ok)) continue;
    pinned.set(action.name, entry);
  }
  const kept = new Set(pinned.values());
  if (auth && older.includes(auth)) kept.add(auth);
  return [...[...kept].sort((a, b) => a.step - b.step), ...tail];
}

/**
 * A loop continued as new in the same process (the bench's in-process baseline, tests): its state
 * becomes what the workflow would carry into its next run.
 */
export function carryInPlace(state: LoopState, startedAtMs: number): void {
  const carried = carryState({
    ...loopRunState(state),
    started_at_ms: startedAtMs,
    human_wait_ms: 0,
    omitted: { trace: 0, history: 0 },
  });
  state.trace = [...carried.trace];
  state.history = [...carried.history];
  state.seenCalls = [...carried.seen_calls];
  state.reads = carried.read_calls;
  state.seenSince = carried.seen_since;
}
