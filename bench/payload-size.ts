// What one decision records in the history, as a conversation grows and as the domain's catalog
// grows: the decide activity's payload (what the workflow schedules, kept in the history) against
// the prompt the model receives (the payload with each tool described). Deterministic: the same
// code the workflow runs (buildDecisionPayload), on conversations of 10 to 400 turns and 4 to 16 tools.
import { EMPTY_TRANSCRIPT, withTurn } from '../common/conversation/conversation';
import type { Transcript } from '../common/conversation/conversation';
import { buildDecisionPayload, promptChars } from '../common/model-view/decision-payload';
import type { Domain } from '../common/domain';
import { DOMAINS } from '../domains/index';
import {
  DEFAULT_CONTEXT_TOKENS,
  functionNames,
  planView,
  renderView,
  viewSourceOf,
} from '../common/model-view/model-view';
import { catalogFor, registryOf } from '../common/tools/tool-catalog';
import { nativeSystemPromptOf } from '../activities/decide/system-prompt';
import { toolsFor } from '../activities/decide/native-tools';

export interface PayloadSize {
  domain: string;
  tools: number;
  turns: number;
  /** UTF-16 characters of the decide payload as recorded (tool names only). */
  recordedChars: number;
  /** Characters of the model's request: system prompt, tools as functions, the whole conversation. */
  promptChars: number;
}

/** From a full window of shown turns (10) up: beyond it the recorded payload must stay flat. */
export const PAYLOAD_TURNS = [10, 40, 400] as const;

function conversationOf(turns: number): Transcript {
  let t = EMPTY_TRANSCRIPT;
  for (let i = 0; i < turns; i++)
    t = withTurn(t, {
      from: i % 2 ? 'customer' : 'agent',
      text: `turn ${i}: ${'a sentence of the conversation '.repeat(4)}`,
      step: i,
    });
  return t;
}

function measure(domain: Domain, turns: number): PayloadSize {
  const allow = domain.tools.map((tool) => tool.name);
  const transcript = conversationOf(turns);
  const input = { goal: 'Serve the customer.' };
  const payload = buildDecisionPayload(input.goal, undefined, [], allow, domain, transcript, true);
  const source = viewSourceOf(input, domain, [], transcript);
  const registry = registryOf(domain.tools);
  const { ref } = planView(source, registry, promptChars(payload, domain), DEFAULT_CONTEXT_TOKENS);
  // What the model receives: the system prompt, the tools as functions, the whole conversation.
  const names = functionNames(allow);
  const messages = [
    { role: 'system', content: nativeSystemPromptOf(payload) },
    ...renderView(source, ref, registry, names, 'native'),
  ];
  const tools = toolsFor(catalogFor(allow, registry), names, true);
  return {
    domain: domain.name,
    tools: allow.length,
    turns,
    // The decide input as recorded: the payload (tool names, no turns) and the view's reference.
    recordedChars: JSON.stringify({ payload, view: ref }).length,
    promptChars: JSON.stringify(messages).length + JSON.stringify(tools).length,
  };
}

export function payloadSizes(): PayloadSize[] {
  return Object.values(DOMAINS).flatMap((domain) => PAYLOAD_TURNS.map((turns) => measure(domain, turns)));
}
