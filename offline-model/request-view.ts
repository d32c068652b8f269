// What a decision's request showed the model, read back by scripted models and tests: the goal and
// principal (the first user message), every step's call and result, the conversation's turns, the
// tools offered. Reads both forms the decide activity sends (docs/model-protocol.md): the whole run
// as chat messages (native tool calls, or json mode's actions and results), and the single JSON
// payload of a decision without a view.

export interface SeenStep {
  step: number;
  action: { kind: string; name?: string; args?: unknown; answer?: unknown; reason?: unknown };
  observation: { tool?: string; ok?: boolean; data?: unknown; source?: string; compacted?: boolean } & Record<
    string,
    unknown
  >;
}

export interface SeenTurn {
  /** Its number in the conversation, counted from the turns shown (and those the view says were omitted). */
  n: number;
  from: 'customer' | 'agent';
  text: string;
  consent?: boolean;
}

export interface RequestView {
  goal?: string;
  domain?: string;
  principal?: Record<string, unknown> | null;
  /** Steps shown (calls with their results), in order. */
  steps: SeenStep[];
  turns: SeenTurn[];
  /** The tools offered, by name (native mode: the functions other than the runtime's). */
  tools: string[];
  state_summary: { steps_completed: number; tools_used: string[] };
  untrusted_observations: { steps: SeenStep[] };
  available_tools: Array<{ name: string }>;
  conversation?: { turns: SeenTurn[] };
  wind_down?: unknown;
}

type Message = { role?: unknown; content?: unknown; tool_calls?: unknown; tool_call_id?: unknown };

const parse = (text: unknown): unknown => {
  if (typeof text !== 'string') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
};
const record = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;

const RUNTIME_FUNCTIONS = new Set(['final_answer', 'escalate']);
const RESULT_PREFIX = /^Result of step (\d+) \(untrusted data\): /;
const CONSENT_PREFIX = '[asked by the runtime before the write] ';

/** The request's view, or undefined when it is not a decision's request. */
export function requestView(body: unknown): RequestView | undefined {
  const messages = record(body)?.messages;
  if (!Array.isArray(messages)) return undefined;
  const all = messages as Message[];
  const firstUser = all.findIndex((m) => m.role === 'user');
  const opening = record(parse(all[firstUser]?.content));
  if (!opening) return undefined;
  // A decision without a view: the payload is the one user message.
  if ('state_summary' in opening) return legacyView(opening);
  const offered = (Array.isArray(record(body)?.tools) ? (record(body)!.tools as unknown[]) : [])
    .map((t) => record(record(t)?.function)?.name)
    .filter((n): n is string => typeof n === 'string' && !RUNTIME_FUNCTIONS.has(n));
  const steps: SeenStep[] = [];
  const turns: SeenTurn[] = [];
  let windDown: unknown;
  for (let i = firstUser + 1; i < all.length; i++) {
    const m = all[i]!;
    const calls = Array.isArray(m.tool_calls) ? (m.tool_calls as unknown[]) : [];
    if (m.role === 'assistant' && calls.length > 0) {
      const fn = record(record(calls[0])?.function);
      const name = String(fn?.name ?? '');
      const args = parse(fn?.arguments) ?? {};
      const id = String(record(calls[0])?.id ?? '');
      const result = all[i + 1]?.role === 'tool' ? record(parse(all[++i]!.content)) : undefined;
      steps.push({ step: Number(id.replace('call_', '')), action: actionOf(name, args), observation: result ?? {} });
    } else if (m.role === 'assistant' && typeof m.content === 'string') {
      const json = record(parse(m.content));
      const next = all[i + 1];
      const result = typeof next?.content === 'string' ? RESULT_PREFIX.exec(next.content) : null;
      if (json && result && next?.role === 'user') {
        // json mode: the action as written, its result as a user message.
        steps.push({
          step: Number(result[1]),
          action: json as SeenStep['action'],
          observation: record(parse((next.content as string).slice(result[0].length))) ?? {},
        });
        i++;
      } else if (m.content.startsWith(CONSENT_PREFIX)) {
        turns.push({ n: turns.length + 1, from: 'agent', text: m.content.slice(CONSENT_PREFIX.length), consent: true });
      } else {
        const text = json && json.kind === 'message' && typeof json.text === 'string' ? json.text : m.content;
        turns.push({ n: turns.length + 1, from: 'agent', text });
      }
    } else if (m.role === 'user' && typeof m.content === 'string') {
      const json = record(parse(m.content));
      if (i === all.length - 1 && json && 'wind_down' in json) windDown = json.wind_down;
      // json mode: a customer's turn is {"customer": <their words>}.
      else if (json && typeof json.customer === 'string')
        turns.push({ n: turns.length + 1, from: 'customer', text: json.customer });
      else turns.push({ n: turns.length + 1, from: 'customer', text: m.content });
    }
  }
  // Whom the run acts for: the input's principal, or the one its authentication result names.
  const authenticated = steps.map((s) => record(s.observation.authenticated_principal)).find((p) => p !== undefined);
  const used = [...new Set(steps.map((s) => (s.action.kind === 'tool' ? String(s.action.name) : s.action.kind)))];
  return {
    goal: typeof opening.goal === 'string' ? opening.goal : undefined,
    principal: (record(opening.principal) ?? authenticated ?? null) as Record<string, unknown> | null,
    domain: typeof opening.domain === 'string' ? opening.domain : undefined,
    steps,
    turns,
    tools: offered,
    state_summary: { steps_completed: steps.length, tools_used: used },
    untrusted_observations: { steps },
    available_tools: offered.map((name) => ({ name })),
    ...('conversation' in opening ? { conversation: { turns } } : {}),
    ...(windDown !== undefined ? { wind_down: windDown } : {}),
  };
}

function actionOf(name: string, args: unknown): SeenStep['action'] {
  const a = record(args) ?? {};
  if (name === 'final_answer') return { kind: 'final', answer: a.answer };
  if (name === 'escalate') return { kind: 'escalate', reason: a.reason };
  return { kind: 'tool', name, args };
}

function legacyView(payload: Record<string, unknown>): RequestView {
  const summary = record(payload.state_summary) ?? {};
  const observed = record(payload.untrusted_observations);
  const steps = (Array.isArray(observed?.steps) ? observed.steps : []) as SeenStep[];
  const tools = (Array.isArray(payload.available_tools) ? payload.available_tools : [])
    .map((t) => (typeof t === 'string' ? t : record(t)?.name))
    .filter((n): n is string => typeof n === 'string');
  const conversation = record(payload.conversation);
  const turns = (Array.isArray(conversation?.turns) ? conversation.turns : []) as SeenTurn[];
  return {
    goal: typeof payload.goal === 'string' ? payload.goal : undefined,
    domain: typeof payload.domain === 'string' ? payload.domain : undefined,
    principal: (record(payload.principal) ?? null) as Record<string, unknown> | null,
    steps,
    turns,
    tools,
    state_summary: {
      steps_completed: typeof summary.steps_completed === 'number' ? summary.steps_completed : steps.length,
      tools_used: Array.isArray(summary.tools_used) ? (summary.tools_used as string[]) : [],
    },
    untrusted_observations: { steps },
    available_tools: tools.map((name) => ({ name })),
    ...(conversation ? { conversation: { turns } } : {}),
    ...(payload.wind_down !== undefined ? { wind_down: payload.wind_down } : {}),
  };
}
