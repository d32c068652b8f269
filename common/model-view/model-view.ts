// What the model reads at a decision: the whole run as chat messages, in the order things happened.
// The goal (and the input's principal) first, then every step's call and labelled, redacted result,
// interleaved with the customer's turns and the agent's messages (consent questions and answers
// included). Past the context budget the oldest tool results are compacted: each replaced by a short
// note saying what it was and how to read it again; never a customer's turn, never an authentication
// result, never the latest result (the model has not read it yet). The workflow decides what is compacted (planView, deterministic, named in the decide
// activity's input); the decide activity renders the messages (renderView) from the run's state,
// which it reads by the model_view Query, so the history never stores the growing view.
// The exact protocol: docs/model-protocol.md.
import { CUSTOMER_NOTICE } from '../conversation/conversation';
import type { Transcript, Turn } from '../conversation/conversation';
import type { Domain } from '../domain';
import { observationForModel, UNTRUSTED_NOTICE } from './decision-payload';
import { estimateTokens } from '../cost/cost';
import { specOf } from '../tools/index';
import { authenticatingTools, authenticationEntry } from '../conversation/authentication-entry';
import type { ToolRegistry } from '../tools/index';
import type { AgentInput, HistoryEntry, ViewRef } from '../types';

/** The runtime's own functions in native mode: no tool offered to the model is named so (functionNames). */
export const FINAL_FUNCTION = 'final_answer';
export const ESCALATE_FUNCTION = 'escalate';

/** The context budget when the run input sets none (tokens of the whole request, estimated). */
export const DEFAULT_CONTEXT_TOKENS = 100_000;

export type { ViewRef } from '../types';

/** The run's state the view is rendered from: what the model_view Query answers. */
export interface ViewSource {
  goal: string;
  domain: string;
  /** The principal the run input named (stable for the whole run); one learnt by authentication shows in its tool result. */
  principal: Record<string, unknown> | null;
  conversation: boolean;
  /** Whom the run acts for since a successful authentication (absent: the input named it, or nobody yet). */
  authenticated?: Record<string, unknown>;
  /**
   * The run's tools whose successful result is an authentication (its MCP servers' too: the decide
   * activity's registry has only its domain's): never compacted. Absent (an older run): the registry's.
   */
  authenticates?: string[];
  /** The step of the authentication `authenticated` was learnt from: only its result says so. */
  authenticated_step?: number;
  history: readonly HistoryEntry[];
  turns: readonly Turn[];
  /** Entries and turns an earlier run of the chain did not carry (counted, said to the model). */
  omitted: { history: number; turns: number };
  /** Steps the Query's answer compacted beyond the plan to stay under its byte cap (viewForQuery). */
  trimmed?: number[];
}

/** The view's source from the run's state (the workflow's, for the Query and for planning alike). */
export function viewSourceOf(
  input: Pick<AgentInput, 'goal' | 'principal' | 'conversation' | 'carried'>,
  domain: Domain,
  history: readonly HistoryEntry[],
  transcript: Transcript | undefined,
  principal?: string,
): ViewSource {
  const authenticates = authenticatingTools(domain.tools);
  const learnt = input.principal === undefined ? principal : undefined;
  const authStep = authenticationEntry(history, learnt, authenticates)?.step;
  return {
    goal: input.goal,
    domain: domain.name,
    principal: input.principal === undefined ? null : domain.principal.forModel(input.principal),
    conversation: transcript !== undefined,
    ...(input.principal === undefined && principal !== undefined
      ? { authenticated: domain.principal.forModel(principal) }
      : {}),
    authenticates,
    ...(authStep !== undefined ? { authenticated_step: authStep } : {}),
    history,
    turns: transcript?.turns ?? [],
    omitted: {
      history: input.carried?.omitted?.history ?? 0,
      turns: transcript ? transcript.total - transcript.turns.length : 0,
    },
  };
}

/**
 * The Query's answer never nears the server's payload limit (2 MiB, even at 3 bytes a character): compacted entries cross as
 * stubs, and past this many characters the oldest results are compacted too (`trimmed`).
 */
export const MODEL_VIEW_MAX_CHARS = 600_000;

/** Arguments of a compacted call longer than this are compacted with its result (a model may send ~30 KB each call). */
export const COMPACT_ARGS_CHARS = 500;

/** A call's arguments as a compacted entry shows them: as they were, or a note when they were long. */
function compactedArgs<T>(args: T): T | { compacted_arguments: string } {
  const chars = JSON.stringify(args ?? {}).length;
  return chars > COMPACT_ARGS_CHARS ? { compacted_arguments: `${chars} characters, no longer shown` } : args;
}

/** Whether a compacted call still shows its arguments (the note can then say to call again with the same). */
function argsKept(args: unknown): boolean {
  const compacted = typeof args === 'object' && args !== null && 'compacted_arguments' in args;
  return !compacted && compactedArgs(args) === args;
}

/** A compacted entry as the Query answers it: only what its compacted rendering reads. */
function stubOf(entry: HistoryEntry): HistoryEntry {
  const { action, observation } = entry;
  return {
    step: entry.step,
    action: action.kind === 'tool' ? { ...action, args: compactedArgs(action.args) } : action,
    observation: {
      tool: observation.tool,
      ok: observation.ok,
      data: null,
      source: observation.source,
      bytes: observation.bytes,
      truncated: observation.truncated,
    },
  };
}

/**
 * What the model_view Query answers for a planned view: the entries the view shows, compacted ones
 * as stubs, and under MODEL_VIEW_MAX_CHARS whatever the model sent (the oldest results, then any
 * but the latest, are compacted further and listed in `trimmed`). No `ref` (an older decide): the whole source.
 */
export function viewForQuery(source: ViewSource, registry: ToolRegistry, ref?: ViewRef): ViewSource {
  if (!ref) return source;
  const history = source.history
    .slice(0, ref.entries)
    .map((e) => (isCompacted(e, ref, registry, undefined, source) ? stubOf(e) : e));
  const out: ViewSource = { ...source, history };
  let chars = JSON.stringify(out).length;
  const trimmed: number[] = [];
  for (let i = 0; i < history.length - 1 && chars > MODEL_VIEW_MAX_CHARS; i++) {
    const entry = history[i]!;
    if (entry.step < ref.compact_before && !isProtected(entry, registry, source)) continue;
    const stub = stubOf(entry);
    chars += JSON.stringify(stub).length - JSON.stringify(entry).length;
    history[i] = stub;
    trimmed.push(entry.step);
  }
  return trimmed.length > 0 ? { ...out, trimmed } : out;
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ToolCallMessage[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface ToolCallMessage {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type ToolMode = 'native' | 'json';

/** The call id of a step's call: derived from the step, never the model's own id. */
export function callId(step: number): string {
  return `call_${step}`;
}

/** A function name OpenAI accepts (`^[a-zA-Z0-9_-]{1,64}$`): other characters (an MCP tool's dot) become `_`. */
export function functionName(tool: string): string {
  const name = tool.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
  return name === '' ? '_' : name;
}

/**
 * The function name of each tool offered, unique and never a runtime function's: a clash gets a
 * numbered suffix. Returns name -> function name.
 */
export function functionNames(tools: readonly string[]): Map<string, string> {
  const taken = new Set([FINAL_FUNCTION, ESCALATE_FUNCTION]);
  const out = new Map<string, string>();
  for (const tool of tools) {
    const base = functionName(tool);
    let name = base;
    for (let i = 2; taken.has(name); i++) name = `${base.slice(0, 60)}_${i}`;
    taken.add(name);
    out.set(tool, name);
  }
  return out;
}

/**
 * Whether an entry's result is never compacted: a successful authentication (whom the run acts for).
 * The run's list of authenticating tools when the source has it, so the workflow's plan and the
 * activity's rendering agree on every entry (an MCP tool's too).
 */
function isProtected(entry: HistoryEntry, registry: ToolRegistry, source?: Pick<ViewSource, 'authenticates'>): boolean {
  if (entry.action.kind !== 'tool' || !entry.observation.ok) return false;
  if (source?.authenticates) return source.authenticates.includes(entry.action.name);
  return specOf(registry, entry.action.name)?.authenticates === true;
}

/** The call a history entry shows as: a tool, or the runtime's function for an escalation or a bounced final answer. */
function callOf(entry: HistoryEntry, names: ReadonlyMap<string, string>): { name: string; args: unknown } {
  const { action } = entry;
  if (action.kind === 'tool') return { name: names.get(action.name) ?? functionName(action.name), args: action.args };
  if (action.kind === 'escalate') return { name: ESCALATE_FUNCTION, args: { reason: action.reason } };
  if (action.kind === 'final') return { name: FINAL_FUNCTION, args: { answer: action.answer } };
  return { name: action.kind, args: {} };
}

/**
 * The tool message's content for an entry: its labelled, redacted observation, or the compaction
 * note. `authenticated`: the entry is the authentication the run's principal comes from, which says so.
 */
function resultText(
  entry: HistoryEntry,
  registry: ToolRegistry,
  compacted: boolean,
  authenticated?: Record<string, unknown>,
): string {
  if (!compacted)
    return JSON.stringify({
      ...observationForModel(entry.observation, registry),
      ...(authenticated ? { authenticated_principal: authenticated } : {}),
    });
  const { action } = entry;
  const again =
    action.kind !== 'tool'
      ? 'it is not available again'
      : argsKept(action.args)
        ? `call ${action.name} again with the same arguments to read it`
        : `call ${action.name} again to read it`;
  return JSON.stringify({
    tool: entry.observation.tool,
    ok: entry.observation.ok,
    compacted: true,
    note: `This result (${entry.observation.bytes} bytes) was compacted to keep the conversation within the context budget; ${again}.`,
  });
}

/** Whether the view `ref` plans shows an entry's result compacted (`trimmed`: also those the Query's byte cap compacted). */
export function isCompacted(
  entry: HistoryEntry,
  ref: Pick<ViewRef, 'compact_before'>,
  registry: ToolRegistry,
  trimmed?: readonly number[],
  source?: Pick<ViewSource, 'authenticates'>,
): boolean {
  if (trimmed?.includes(entry.step)) return true;
  return entry.step < ref.compact_before && !isProtected(entry, registry, source);
}

/** How json mode's customer turns read (no other user message is a JSON object with `customer`). */
const JSON_CUSTOMER =
  'Each customer message is a JSON object {"customer": <their words>} (with "ended": true when they ended the conversation).';

/** The first user message: the task, whom the run acts for (when the input names it), and how to read the rest. */
function opening(source: ViewSource, mode: ToolMode): string {
  return JSON.stringify({
    goal: source.goal,
    domain: source.domain,
    principal: source.principal,
    untrusted_data: UNTRUSTED_NOTICE,
    ...(source.conversation
      ? { conversation: mode === 'json' ? `${CUSTOMER_NOTICE} ${JSON_CUSTOMER}` : CUSTOMER_NOTICE }
      : {}),
    ...(source.omitted.history + source.omitted.turns > 0
      ? {
          omitted: `An earlier part of this run (${source.omitted.history} steps, ${source.omitted.turns} turns) is no longer kept.`,
        }
      : {}),
  });
}

/** One entry as chat messages: the call, then its result. */
function entryMessages(
  entry: HistoryEntry,
  registry: ToolRegistry,
  names: ReadonlyMap<string, string>,
  compacted: boolean,
  mode: ToolMode,
  authenticated?: Record<string, unknown>,
): ChatMessage[] {
  const shown = callOf(entry, names);
  const call = compacted ? { ...shown, args: compactedArgs(shown.args) } : shown;
  const result = resultText(entry, registry, compacted, authenticated);
  if (mode === 'json') {
    // Servers without tool calling: the action as the model wrote it, the result as a user message.
    return [
      {
        role: 'assistant',
        content: JSON.stringify(
          compacted && entry.action.kind === 'tool'
            ? { ...entry.action, args: compactedArgs(entry.action.args) }
            : entry.action,
        ),
      },
      { role: 'user', content: `Result of step ${entry.step} (untrusted data): ${result}` },
    ];
  }
  const id = callId(entry.step);
  return [
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args ?? {}) } }],
    },
    { role: 'tool', tool_call_id: id, content: result },
  ];
}

/** One turn as a chat message: the customer's words verbatim, the agent's messages as the assistant's. */
function turnMessage(turn: Turn, mode: ToolMode): ChatMessage {
  // json mode: results are user messages too, so a customer's words go as a JSON string the runtime
  // escapes ({"customer": ...}); no text a customer writes can read as a tool result.
  if (turn.from === 'customer' && mode === 'json')
    return { role: 'user', content: JSON.stringify({ customer: turn.text, ...(turn.end ? { ended: true } : {}) }) };
  if (turn.from === 'customer') {
    const text = turn.text === '' && turn.end ? '(the customer ended the conversation)' : turn.text;
    return {
      role: 'user',
      content: turn.end && turn.text !== '' ? `${text}\n(the customer ended the conversation)` : text,
    };
  }
  // The runtime's consent question is said in the agent's voice; marked so the model knows it asked nothing itself.
  if (turn.consent) return { role: 'assistant', content: `[asked by the runtime before the write] ${turn.text}` };
  return {
    role: 'assistant',
    content: mode === 'json' ? JSON.stringify({ kind: 'message', text: turn.text }) : turn.text,
  };
}

/**
 * The run in order: entries by step, turns by number. A turn of step s comes after step s's call
 * and result, except a consent question and the customer's answer to it (their next turn), which
 * come before the call they are about (the call's result must follow the call at once). A later
 * customer turn of step s was written while the write ran: it comes after the call and its result.
 */
function ordered<T>(
  source: ViewSource,
  ref: Pick<ViewRef, 'entries' | 'turns'>,
  entry: (e: HistoryEntry) => T[],
  turn: (t: Turn) => T,
): T[] {
  const entries = source.history.slice(0, ref.entries);
  const turns = source.turns.filter((t) => t.n <= ref.turns);
  const out: T[] = [];
  let i = 0;
  const flush = (before: number) => {
    while (i < entries.length && entries[i]!.step < before) out.push(...entry(entries[i++]!));
  };
  let consentStep: number | undefined;
  for (const t of turns) {
    if (t.consent) consentStep = t.step;
    else if (t.from === 'agent' || t.step !== consentStep) consentStep = undefined;
    flush(consentStep === t.step ? t.step : t.step + 1);
    out.push(turn(t));
    // Only the customer's first turn after the question answers it.
    if (t.from === 'customer') consentStep = undefined;
  }
  flush(Infinity);
  return out;
}

/** The decision's messages after the system prompt. */
export function renderView(
  source: ViewSource,
  ref: ViewRef,
  registry: ToolRegistry,
  names: ReadonlyMap<string, string>,
  mode: ToolMode,
  windDown?: string,
): ChatMessage[] {
  // The authentication the principal comes from (never compacted); an older run's source: its first one.
  const auth = !source.authenticated
    ? undefined
    : source.authenticates
      ? source.history.find((e) => e.step === source.authenticated_step)
      : source.history.find((e) => isProtected(e, registry));
  const body = ordered(
    source,
    ref,
    (e) =>
      entryMessages(
        e,
        registry,
        names,
        isCompacted(e, ref, registry, source.trimmed, source),
        mode,
        e === auth ? source.authenticated : undefined,
      ),
    (t) => turnMessage(t, mode),
  );
  return [
    { role: 'user', content: opening(source, mode) },
    ...body,
    ...(windDown !== undefined ? [{ role: 'user' as const, content: windDown }] : []),
  ];
}

/** A message's characters as the request sends it (JSON, its quotes escaped), and the comma after it. */
function messageChars(message: ChatMessage): number {
  return JSON.stringify(message).length + 1;
}

/**
 * What to compact so that the view fits the budget: the oldest tool results first (never an
 * authentication result, never the latest result, which the model has not read yet; turns are never
 * compacted). `fixedChars`: the request outside the view (the system prompt and the tools); the
 * opening is counted here. A view that does not fit even so says by how much (`over_budget_tokens`).
 * Deterministic: the workflow plans with it, from the same state the activity renders.
 */
export function planView(
  source: ViewSource,
  registry: ToolRegistry,
  fixedChars: number,
  budgetTokens: number,
): { ref: ViewRef; chars: number } {
  const entries = source.history;
  const turns = source.turns;
  const ref: ViewRef = {
    entries: entries.length,
    turns: turns.length > 0 ? turns[turns.length - 1]!.n : 0,
    compact_before: 0,
    compacted: 0,
    budget_tokens: budgetTokens,
  };
  const names = new Map<string, string>();
  const full = entries.map((e) => entryChars(e, registry, names, false));
  let chars = fixedChars + turns.reduce((n, t) => n + messageChars(turnMessage(t, 'native')), 0);
  chars += messageChars({ role: 'user', content: opening(source, 'native') }) + full.reduce((n, c) => n + c, 0);
  for (let i = 0; i < entries.length - 1 && estimateTokens(chars) > budgetTokens; i++) {
    const entry = entries[i]!;
    ref.compact_before = entry.step + 1;
    if (isProtected(entry, registry, source)) continue;
    chars += entryChars(entry, registry, names, true) - full[i]!;
    ref.compacted++;
  }
  // Every unprotected entry before compact_before is compacted (the count says how many).
  if (estimateTokens(chars) > budgetTokens) ref.over_budget_tokens = estimateTokens(chars);
  return { ref, chars };
}

function entryChars(
  entry: HistoryEntry,
  registry: ToolRegistry,
  names: Map<string, string>,
  compacted: boolean,
): number {
  return entryMessages(entry, registry, names, compacted, 'native').reduce((n, m) => n + messageChars(m), 0);
}
