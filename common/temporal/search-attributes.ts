// The run's custom search attributes: what an operator filters on in the Web UI and with
// `agent list` / `agent cancel --stuck` (status, stop reason, step, tool calls, principal).
//
// How a run knows they exist: upserting an attribute the namespace does not have fails the
// workflow task again and again, so the workflow never assumes it. The client checks the
// namespace once (client/search-attribute-check.ts: operatorService.listSearchAttributes) and sets
// `search_attributes: true` in the input; only then does the workflow upsert.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { SearchAttributePair } from '@temporalio/common';
import { toolNamedReason } from '../stop-reasons';
import { displaySafe } from '../text/visible-text';
import { registeredToolOr } from '../tools/registry';
import type { ToolRegistry } from '../tools/registry';

// The table: each attribute once, with its type. Everything else is derived from AGENT_SEARCH_ATTRIBUTE_KEYS:
// the definitions the client checks for, the dev server's --search-attribute flags
// (local-servers/dev-server.ts) and what the deployment registers (local-servers/namespace.ts).
export const AGENT_STATUS = defineSearchAttributeKey('AgentStatus', SearchAttributeType.KEYWORD);
export const AGENT_STOP_REASON = defineSearchAttributeKey('AgentStopReason', SearchAttributeType.KEYWORD);
export const AGENT_STEP = defineSearchAttributeKey('AgentStep', SearchAttributeType.INT);
export const AGENT_TOOL_CALLS = defineSearchAttributeKey('AgentToolCalls', SearchAttributeType.INT);
export const AGENT_PRINCIPAL = defineSearchAttributeKey('AgentPrincipal', SearchAttributeType.KEYWORD);
/**
 * The goal, for the Web UI's run list (a column of the list; the static summary shows only on the
 * run's page). Set once at start by the client, never by the workflow, and optional: a namespace
 * registered before it has the other five and runs as before.
 */
export const AGENT_GOAL = defineSearchAttributeKey('AgentGoal', SearchAttributeType.KEYWORD);

/**
 * What the run waits for now (a person's approval or answer, the customer, a top-up, or `none`):
 * the operator's inbox (`agent list --waiting`). Optional like AgentGoal.
 */
export const AGENT_WAITING = defineSearchAttributeKey('AgentWaiting', SearchAttributeType.KEYWORD);

export const AGENT_SEARCH_ATTRIBUTE_KEYS = [
  AGENT_STATUS,
  AGENT_STOP_REASON,
  AGENT_STEP,
  AGENT_TOOL_CALLS,
  AGENT_PRINCIPAL,
  AGENT_GOAL,
  AGENT_WAITING,
];

/** Attributes the runs work without (startRun sets them only where registered). */
export const OPTIONAL_SEARCH_ATTRIBUTES: ReadonlySet<string> = new Set([AGENT_GOAL.name, AGENT_WAITING.name]);

/** Characters of the goal in AgentGoal: a list column, one line. */
export const GOAL_ATTRIBUTE_CHARS = 120;

/** The goal as AgentGoal: the operator's free text on one line, bounded (a cut one ends with `…`). */
export function goalAttribute(goal: string): string {
  const chars = Array.from(displaySafe(goal).replace(/\s+/g, ' ').trim());
  return chars.length <= GOAL_ATTRIBUTE_CHARS
    ? chars.join('')
    : `${chars.slice(0, GOAL_ATTRIBUTE_CHARS - 1).join('')}…`;
}

/** SearchAttributeType as the temporal CLI spells it (`--search-attribute AgentStep=Int`). */
const CLI_TYPE_NAMES: Record<SearchAttributeType, string> = {
  [SearchAttributeType.TEXT]: 'Text',
  [SearchAttributeType.KEYWORD]: 'Keyword',
  [SearchAttributeType.INT]: 'Int',
  [SearchAttributeType.DOUBLE]: 'Double',
  [SearchAttributeType.BOOL]: 'Bool',
  [SearchAttributeType.DATETIME]: 'Datetime',
  [SearchAttributeType.KEYWORD_LIST]: 'KeywordList',
};

/** Every attribute with the type the namespace must have it registered as (temporal CLI spelling). */
export const AGENT_SEARCH_ATTRIBUTE_DEFINITIONS: ReadonlyArray<{ name: string; type: string }> =
  AGENT_SEARCH_ATTRIBUTE_KEYS.map((key) => ({ name: key.name, type: CLI_TYPE_NAMES[key.type] }));

/** `temporal server start-dev` flags that register every attribute. */
export function devServerSearchAttributeFlags(): string[] {
  return AGENT_SEARCH_ATTRIBUTE_DEFINITIONS.flatMap((d) => ['--search-attribute', `${d.name}=${d.type}`]);
}

/** AgentStatus values. `cancelled` is a run stopped by the kill switch (Temporal status Canceled). */
export const RUN_STATUSES = ['running', 'ok', 'stopped', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** Stop reasons can carry a model-chosen tool name: keep the Keyword value bounded. */
export const MAX_KEYWORD_CHARS = 200;

export function keywordValue(text: string): string {
  return text.length <= MAX_KEYWORD_CHARS ? text : text.slice(0, MAX_KEYWORD_CHARS);
}

/**
 * The stop reason as a search attribute: the payload codec never encrypts search attributes, so
 * text the model chose (a made-up tool name) must not land there. Unknown tools read `unknown`;
 * `otherTools` are names the run knows besides its registry's (its MCP servers' listed and
 * configured tools, e.g. one the config denies), already checked and bounded by the caller.
 */
export function attributeStopReason(
  reason: string,
  registry: ToolRegistry,
  otherTools: ReadonlySet<string> = NO_OTHER_TOOLS,
): string {
  const named = toolNamedReason(reason);
  if (!named) return reason;
  return `${named.key}:${otherTools.has(named.tool) ? named.tool : registeredToolOr(registry, named.tool)}`;
}

const NO_OTHER_TOOLS: ReadonlySet<string> = new Set();

export interface RunAttributes {
  status: RunStatus;
  step: number;
  toolCalls: number;
  /** Absent until a run that learns it has authenticated the customer. */
  principal?: string | undefined;
  stopReason?: string;
}

/** All attributes of a run, as pairs for `upsertSearchAttributes` or a workflow start; `registry` names the tools a stop reason may name. */
export function attributePairs(
  a: RunAttributes,
  registry: ToolRegistry,
  otherTools: ReadonlySet<string> = NO_OTHER_TOOLS,
): SearchAttributePair[] {
  const pairs: SearchAttributePair[] = [
    { key: AGENT_STATUS, value: a.status },
    { key: AGENT_STEP, value: a.step },
    { key: AGENT_TOOL_CALLS, value: a.toolCalls },
  ];
  if (a.principal !== undefined) pairs.push({ key: AGENT_PRINCIPAL, value: keywordValue(a.principal) });
  if (a.stopReason !== undefined)
    pairs.push({
      key: AGENT_STOP_REASON,
      value: keywordValue(attributeStopReason(a.stopReason, registry, otherTools)),
    });
  return pairs;
}
