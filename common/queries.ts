import { defineQuery } from '@temporalio/workflow';
import type { AgentState } from './types';

/** Live state of a run: step, budgets used and left, last action, what it waits for. */
export const stateQuery = defineQuery<AgentState>('state');
