// The agent workflow's message handlers (common/agent-messages.ts): the state and model_view
// Queries, the approval, extend and say Updates, the attempt_charged Signal. Each hands its
// message to the run; registered before the run's first await, so no message waits unhandled.
import { log, setHandler } from '@temporalio/workflow';
import {
  APPROVAL_UPDATE_DESCRIPTION,
  ATTEMPT_CHARGED_DESCRIPTION,
  ATTEMPT_CHARGED_SIGNAL,
  approvalUpdate,
  EXTEND_UPDATE_DESCRIPTION,
  extendUpdate,
  MODEL_VIEW_QUERY_DESCRIPTION,
  modelViewQuery,
  SAY_UPDATE_DESCRIPTION,
  sayUpdate,
  STATE_QUERY_DESCRIPTION,
  stateQuery,
} from '../../common/agent-messages';
import type { SayReceipt, SayRequest } from '../../common/conversation/conversation';
import type { ViewRef, ViewSource } from '../../common/model-view/model-view';
import { decodedArgument, undecodedSignal } from '../../common/temporal/undecoded-signal';
import type { AgentState } from '../../common/types';
import type { Conversation } from '../conversation/conversation';
import type { Waits } from '../conversation/waits';
import type { Decisions } from '../calls/decide-call';
import type { TopUps } from './top-ups';

/** What the handlers reach of a run. */
export interface HandledRun {
  readonly waits: Waits;
  readonly decisions: Decisions;
  readonly conversation: Conversation;
  snapshot(): AgentState;
  modelView(ref?: ViewRef): ViewSource;
  readonly topUps: TopUps;
  say(message: SayRequest): SayReceipt;
}

/** What the say validator checks instead of a request sent with other than one argument (refused as not an object). */
const TWO_ARGUMENTS = 'one message per say: {text, end?}';

export function setAgentHandlers(run: HandledRun): void {
  setHandler(stateQuery, () => run.snapshot(), { description: STATE_QUERY_DESCRIPTION });
  setHandler(modelViewQuery, (ref) => run.modelView(ref), { description: MODEL_VIEW_QUERY_DESCRIPTION });
  setHandler(approvalUpdate, (answer) => run.waits.answer(answer), {
    validator: (answer) => run.waits.validateAnswer(answer),
    description: APPROVAL_UPDATE_DESCRIPTION,
  });
  setHandler(extendUpdate, (request) => run.topUps.grant(request), {
    validator: (request) => run.topUps.validate(request),
    description: EXTEND_UPDATE_DESCRIPTION,
  });
  setHandler(sayUpdate, (message) => run.say(message), {
    // One message per Update: a second argument (any client can send one) would be dropped unread.
    validator: (...args: unknown[]) => run.conversation.validate(args.length === 1 ? args[0] : TWO_ARGUMENTS),
    description: SAY_UPDATE_DESCRIPTION,
  });
  // Read undecoded, so that a payload nothing can read is dropped here instead of failing the task.
  setHandler(
    undecodedSignal(ATTEMPT_CHARGED_SIGNAL),
    (...args: unknown[]) => {
      const arg = decodedArgument(args[0]);
      if (typeof arg === 'string') return log.warn(`dropped an ${ATTEMPT_CHARGED_SIGNAL} signal: ${arg}`);
      run.decisions.attemptCharged(arg.value);
    },
    { description: ATTEMPT_CHARGED_DESCRIPTION },
  );
}
