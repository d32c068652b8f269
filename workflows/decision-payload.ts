// What the decision step sees: the goal, a summary and the last few steps, never the whole
// conversation again, so each decide call (and its history event) stays the same size as a run grows.
import { catalogFor } from './tool-catalog';
import type { DecisionPayload, HistoryEntry } from './types';

export const RECENT_STEPS = 3;

export function buildDecisionPayload(goal: string, userId: number, history: HistoryEntry[], allow: readonly string[]): DecisionPayload {
  const last = history.length > 0 ? history[history.length - 1]! : undefined;
  return {
    goal,
    principal: { user_id: userId },
    state_summary: {
      steps_completed: history.length,
      // Distinct names in order of first use: bounded by the catalog, not by the run's length
      // (a list with one entry per step made step 200's decide input 2x the size of step 10's).
      tools_used: [...new Set(history.map((h) => (h.action.kind === 'tool' ? h.action.name : h.action.kind)))],
      last_observation: last ? last.observation : null,
    },
    recent_history: history.slice(-RECENT_STEPS),
    available_tools: catalogFor(allow),
  };
}
