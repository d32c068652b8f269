// Native tool calling: the tools the model may call as Chat Completions `tools`, and its answer
// mapped onto the action contract's JSON text, which the workflow validates exactly as a JSON-mode
// answer (common/contract.ts): every gateway check and stop reason is unchanged. The mapping is
// documented in docs/model-protocol.md; keep the two together.
import type { CatalogEntry, JsonSchema } from '../../common/tools/catalog-entry';
import { MAX_ACTION_DEPTH } from '../../common/contract';
import { ESCALATE_FUNCTION, FINAL_FUNCTION } from '../../common/model-view/model-view';

export interface FunctionTool {
  type: 'function';
  function: { name: string; description: string; parameters: JsonSchema; strict?: boolean };
}

/** The runtime's own functions: a final answer, and handing the run to a person. */
function runtimeFunctions(conversation: boolean): FunctionTool[] {
  return [
    {
      type: 'function',
      function: {
        name: FINAL_FUNCTION,
        description: conversation
          ? 'End the conversation: your work is done. The answer is the last thing the customer reads.'
          : 'The final answer: the evidence is sufficient. Ends the run.',
        parameters: {
          type: 'object',
          properties: { answer: { type: 'string', description: 'The short final answer.' } },
          required: ['answer'],
          additionalProperties: false,
        },
        strict: true,
      },
    },
    {
      type: 'function',
      function: {
        name: ESCALATE_FUNCTION,
        description: 'Hand the run to a person: something your tools and the policy do not settle.',
        parameters: {
          type: 'object',
          properties: { reason: { type: 'string', description: 'Why a person must decide.' } },
          required: ['reason'],
          additionalProperties: false,
        },
        strict: true,
      },
    },
  ];
}

/** The request's `tools`: each offered tool under its function name, then the runtime's functions. */
export function toolsFor(
  catalog: readonly CatalogEntry[],
  names: ReadonlyMap<string, string>,
  conversation: boolean,
): FunctionTool[] {
  const tools: FunctionTool[] = catalog.map((entry) => {
    const { $schema: _drop, ...parameters } = entry.args;
    return {
      type: 'function',
      function: {
        name: names.get(entry.name)!,
        description: entry.description,
        parameters,
        ...(strictAllowed(parameters) ? { strict: true } : {}),
      },
    };
  });
  return [...tools, ...runtimeFunctions(conversation)];
}

/** Keywords OpenAI's strict mode accepts (structured outputs' supported subset). */
const STRICT_KEYWORDS = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'description',
  'anyOf',
  'pattern',
  'format',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
]);

/**
 * Whether a schema may go `strict`: every object closed (additionalProperties false) with every
 * property required, and only keywords strict mode supports. Otherwise the tool goes non-strict
 * (the gateway checks the arguments with the zod schema either way).
 */
export function strictAllowed(schema: unknown): boolean {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return false;
  const s = schema as Record<string, unknown>;
  if (Object.keys(s).some((key) => !STRICT_KEYWORDS.has(key))) return false;
  if (s.type === 'object' || s.properties !== undefined) {
    if (s.additionalProperties !== false) return false;
    const props = (s.properties ?? {}) as Record<string, unknown>;
    const required = Array.isArray(s.required) ? s.required : [];
    if (Object.keys(props).some((key) => !required.includes(key))) return false;
    if (!Object.values(props).every(strictAllowed)) return false;
  }
  if (s.items !== undefined && !strictAllowed(s.items)) return false;
  if (s.anyOf !== undefined && !(Array.isArray(s.anyOf) && s.anyOf.every(strictAllowed))) return false;
  return true;
}

/** The answer's message as the client returns it (only what the mapping reads). */
export interface AnswerMessage {
  /** Text, or (some servers) a list of parts: `[{"type":"text","text":"..."}]`. */
  content?: string | ReadonlyArray<unknown> | null;
  /** A refusal (OpenAI's shape: `content: null` and the model's words here). */
  refusal?: unknown;
  tool_calls?: ReadonlyArray<{ type?: string; function?: { name?: unknown; arguments?: unknown } } | null> | null;
}

/**
 * The answer as the contract's JSON text, or undefined for an answer with neither a tool call nor
 * text (retried as a malformed answer). The first tool call is the step; further calls in the same
 * answer are not made (the model sees only the first in the next decision and may call the others then).
 * Malformed arguments stay malformed, so the contract names them (bad_args, missing_answer, ...).
 */
export function actionTextOf(
  message: AnswerMessage,
  byFunction: ReadonlyMap<string, string>,
  conversation: boolean,
): string | undefined {
  // A model's answer is untrusted: entries that are not objects (null) are skipped, not fatal.
  const calls: unknown[] = Array.isArray(message.tool_calls) ? message.tool_calls : [];
  const call = calls.find((c) => typeof c === 'object' && c !== null) as
    { function?: { name?: unknown; arguments?: unknown } } | undefined;
  // A refusal is the model's answer in words, as its text would be.
  const content = textOf(message.content) || (typeof message.refusal === 'string' ? message.refusal : '');
  if (call) {
    const name = typeof call.function?.name === 'string' ? call.function.name : '';
    const args = parsedArgs(call.function?.arguments);
    const object = typeof args === 'object' && args !== null && !Array.isArray(args);
    // Text beside a call ("Let me look the order up.") is the model's label for it: the trace's
    // decision_summary (its first line; the contract cuts it to 160 characters).
    const said = (content.trim().split('\n')[0] ?? '').trim();
    const summary = said ? { decision_summary: said } : {};
    try {
      if (name === FINAL_FUNCTION) return JSON.stringify({ ...summary, ...(object ? args : {}), kind: 'final' });
      if (name === ESCALATE_FUNCTION) return JSON.stringify({ ...summary, ...(object ? args : {}), kind: 'escalate' });
      return JSON.stringify({ kind: 'tool', name: byFunction.get(name) ?? name, args, ...summary });
    } catch {
      // Arguments nested too deep to write out again: the contract's too_deep.
      return '['.repeat(MAX_ACTION_DEPTH + 1) + ']'.repeat(MAX_ACTION_DEPTH + 1);
    }
  }
  const text = content;
  if (text.trim() === '') return undefined;
  return JSON.stringify(conversation ? { kind: 'message', text } : { kind: 'final', answer: text });
}

/** The message's text: a string, or the text parts of a list joined; anything else is no text. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part: unknown) =>
      typeof part === 'string'
        ? part
        : typeof part === 'object' && part !== null && typeof (part as { text?: unknown }).text === 'string'
          ? (part as { text: string }).text
          : '',
    )
    .join('');
}

/**
 * The call's arguments: the parsed JSON, or the raw text when it is not JSON (the contract says
 * bad_args). Arguments are JSON text (a string, as the API sends them): anything else in their
 * place (an object, a number) is kept as its JSON text, not JSON of an object, so bad_args too.
 */
function parsedArgs(raw: unknown): unknown {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'string') return `not a JSON text: ${typeof raw}`;
  if (raw.trim() === '') return {};
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}
