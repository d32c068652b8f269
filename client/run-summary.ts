// What the Web UI shows for a run before anyone opens it: a one-line summary (the principal and the
// goal) in the run list, and details (goal, tools, budget) on the run's page. Set once at start
// (WorkflowStartOptions staticSummary / staticDetails), in Temporal's markdown, the goal bounded and
// escaped. They are payloads like the run's input, so the payload codec encrypts them when a key is
// configured; they say nothing the input does not.
import { resolveBudget } from '../common/cost/budget';
import { displaySafe } from '../common/text/visible-text';
import type { AgentInput } from '../common/types';

export const SUMMARY_MAX_CHARS = 120;
export const DETAILS_GOAL_MAX_CHARS = 1000;

export interface RunSummary {
  staticSummary: string;
  staticDetails: string;
}

export function runSummary(input: AgentInput): RunSummary {
  const budget = resolveBudget(input.budget);
  const tokens = budget.max_tokens > 0 ? `${budget.max_tokens} tokens` : 'tokens unlimited';
  // A domain that learns whom it serves says so until the customer is authenticated.
  const who =
    input.principal !== undefined ? `user ${markdownText(input.principal)}` : `a ${input.domain ?? 'support'} customer`;
  return {
    staticSummary: `${who}: ${markdownText(bounded(oneLine(input.goal), SUMMARY_MAX_CHARS))}`,
    staticDetails: [
      `**Agent run for ${who}**`,
      '',
      `**Goal:** ${markdownText(bounded(oneLine(input.goal), DETAILS_GOAL_MAX_CHARS))}`,
      '',
      `**Tools allowed:** ${input.allow.length > 0 ? input.allow.map(markdownText).join(', ') : 'none'}`,
      '',
      `**Budget:** ${budget.max_steps} steps, ${budget.max_tool_calls} tool calls, ${budget.max_seconds} s, ${tokens}, ` +
        (budget.max_usd > 0 ? `USD ${budget.max_usd} for LLM calls` : 'dollars unlimited') +
        (input.topup_wait_seconds ? ` (waits ${input.topup_wait_seconds} s for a top-up)` : ''),
    ].join('\n'),
  };
}

function oneLine(text: string): string {
  return displaySafe(text).replace(/\s+/g, ' ').trim();
}

function bounded(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/**
 * The goal is the operator's free text, on one line after a label: shown as text, never as HTML,
 * emphasis or links (the Web UI links a bare `https://` address unless its ':' is escaped).
 */
function markdownText(text: string): string {
  return displaySafe(text)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/([\\`*_[\]])/g, '\\$1')
    .replace(/:\/\//g, '\\://');
}
