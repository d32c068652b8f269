// Every name a client, an activity or a test uses to talk to the agent workflow: its Queries,
// Updates and Signal (with the descriptions the Web UI shows), and the failure types its handlers,
// its entry and its activities throw. The strings are in recorded histories and in clients
// already deployed: never rename one. The limiter workflow's messages live with the limiter
// (common/limiter/llm-limiter.ts).
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { ApprovalAnswer, ApprovalReceipt } from './conversation/approvals';
import type { SayReceipt, SayRequest } from './conversation/conversation';
import { CONVERSATION_LIMITS } from './conversation/conversation';
import type { ExtendReceipt, ExtendRequest } from './cost/extend';
import type { ViewRef, ViewSource } from './model-view/model-view';
import type { AgentState } from './types';

/** Live state of a run: step, budgets used and left, last action, what it waits for. */
export const stateQuery = defineQuery<AgentState>('state');

/** Shown by the Web UI and `temporal workflow metadata` next to the query (given to setHandler). */
export const STATE_QUERY_DESCRIPTION =
  'Live state of the agent run: phase, step, budgets used and left, the last action, what it waits for ' +
  '(an LLM decision, a tool, a person) and the trace so far. Read-only.';

/** The Query the decide activity asks its own run: not recorded in the history. */
export const modelViewQuery = defineQuery<ViewSource, [ViewRef?]>('model_view');

export const MODEL_VIEW_QUERY_DESCRIPTION =
  "The run as its decide activity renders it for the model: the goal, every step's call and result, the " +
  'conversation turns (unredacted: the activity redacts). Read-only.';

export const approvalUpdate = defineUpdate<ApprovalReceipt, [ApprovalAnswer]>('approval');

/** Shown by the Web UI and `temporal workflow metadata` next to the Update (given to setHandler). */
export const APPROVAL_UPDATE_DESCRIPTION =
  "A person's answer to what the run awaits: {id, decision: approve | reject | answer, reason?, text?, operator?}. " +
  'The id must be the pending one (the state query shows it); an answer that does not match is rejected ' +
  'and leaves no trace in the history; the same answer twice is harmless.';

export const extendUpdate = defineUpdate<ExtendReceipt, [ExtendRequest]>('extend');

export const EXTEND_UPDATE_DESCRIPTION =
  'Top up the run\'s budget: {"usd"?, "steps"?, "tool_calls"?, "seconds"?, "tokens"?, "reason", "operator"?}. ' +
  'Bounded amounts that raise only budgets the run has (no dollar or token budget: refused); a reason in visible text is required; ' +
  'the operator is recorded as sent (not authenticated). A run waiting for a top-up resumes.';

export const sayUpdate = defineUpdate<SayReceipt, [SayRequest]>('say');

export const SAY_UPDATE_DESCRIPTION =
  'A customer message to a conversation run: {text, end?, seen?}. text: visible text, at most 4000 characters; end: true ' +
  `ends the conversation; seen: the last turn the customer had been shown (a message written before a consent ` +
  `question was shown is refused while it waits). A message sent while the agent works waits for its next decision (at most ` +
  `${CONVERSATION_LIMITS.unanswered} unanswered); a refused message leaves no trace in the history.`;

/** A paid failed LLM attempt, Signalled by the decide activity (common/cost/attempt-charged.ts). */
export const ATTEMPT_CHARGED_SIGNAL = 'llm_attempt_charged';
export const attemptChargedSignal = defineSignal<[unknown]>(ATTEMPT_CHARGED_SIGNAL);
export const ATTEMPT_CHARGED_DESCRIPTION =
  'Sent by the decide activity: a failed LLM attempt that reported usage, priced. Dropped unless it belongs to the decision running now.';

// Failure types (ApplicationFailure.type).

/** The run's input is refused at its start (workflows/agent/entry.ts). */
export const INVALID_INPUT = 'InvalidAgentInput';
/** Update validators' refusals: a top-up, an approval, a customer message. */
export const INVALID_TOP_UP = 'InvalidTopUp';
export const INVALID_APPROVAL = 'InvalidApproval';
export const INVALID_MESSAGE = 'InvalidMessage';

/** The decide activity's failures, which the workflow classifies. */
export const LLM_TIMEOUT = 'LlmTimeout';
export const LLM_RETRYABLE = 'LlmRetryable';
export const LLM_REJECTED = 'LlmRejected';
/** An attempt the dollar budget left for its decision could not pay for: not sent, not retried. */
export const LLM_BUDGET = 'LlmBudgetExhausted';
/** llm_pricing on a worker whose model has no price. */
export const UNPRICED_MODEL = 'UnpricedModel';

/** A tool activity's arguments did not parse. */
export const TOOL_BAD_ARGS = 'ToolBadArgs';
/** An MCP tool's activities: a bad server configuration, a server down, a tool error, no lookup answered. */
export const MCP_CONFIG = 'McpConfig';
export const MCP_UNAVAILABLE = 'McpUnavailable';
export const MCP_TOOL_ERROR = 'McpToolError';
export const MCP_NO_LOOKUP = 'McpNoLookup';
/** An activity type this worker does not serve. */
export const ACTIVITY_NOT_FOUND = 'NotFound';
