import { defineQuery } from '@temporalio/workflow';
import type { AgentState } from './types';

/** Live state of a run: step, budgets used and left, last action, what it waits for. */
export const stateQuery = defineQuery<AgentState>('state');

/** Shown by the Web UI and `temporal workflow metadata` next to the query (given to setHandler). */
export const STATE_QUERY_DESCRIPTION =
  'Live state of the agent run: phase, step, budgets used and left, the last action, what it waits for ' +
  '(an LLM decision, a tool, a person) and the trace so far. Read-only.';
