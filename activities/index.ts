// The activities a worker registers. Type names are `decide` and the tool names, so the Web UI's
// event list reads like the trace.
import type { LlmConfig } from './llm-config';
import { createDecide } from './decide';
import type { DataSource } from './tools/data-source';
import { createGetUserProfile } from './tools/profile';
import { createGetUserBilling } from './tools/billing';
import { createSearchPolicy } from './tools/policy';

export interface ActivityDeps {
  llm: LlmConfig;
  data: DataSource;
}

export function createActivities(deps: ActivityDeps) {
  return {
    decide: createDecide(deps.llm),
    get_user_profile: createGetUserProfile(deps.data),
    get_user_billing: createGetUserBilling(deps.data),
    search_policy: createSearchPolicy(deps.data),
  };
}
