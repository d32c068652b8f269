// What a run is doing now: its phase and tool (the state query reads them) and the Web UI's
// current details, which show them, or how the run ended, then a conversation's turns.
import { setCurrentDetails, workflowInfo } from '@temporalio/workflow';
import type { Budget, Usage } from '../../common/cost/budget';
import type { PendingApproval } from '../../common/conversation/approvals';
import type { Phase } from '../../common/types';
import { conversationDetails, phaseDetails } from '../reporting/run-details';
import type { Conversation } from '../conversation/conversation';
import type { Waits } from '../conversation/waits';

export class RunPhase {
  phase: Phase = 'starting';
  tool: string | undefined;
  /** The first line of the current details: the phase now, or how the run ended. */
  private head = '';

  constructor(
    private readonly conversation: Conversation,
    private readonly waits: Waits,
  ) {}

  set(
    phase: Phase,
    tool: string | undefined,
    run: { usage: Usage; budget: Budget; principal: string | undefined; pending?: PendingApproval | undefined },
  ): void {
    this.phase = phase;
    this.tool = tool;
    const { usage, budget, principal, pending } = run;
    const where = { workflowId: workflowInfo().workflowId, principal, pending };
    this.show(phaseDetails({ phase, tool, usage, budget, ...where }));
  }

  /** The run ended: `head` says how. */
  ended(head: string): void {
    this.phase = 'done';
    this.tool = undefined;
    this.show(head);
  }

  /** The Web UI's current details: `head` (the phase or the ending), then a conversation's turns. */
  show(head: string = this.head): void {
    this.head = head;
    const transcript = this.conversation.carried();
    const customer = this.phase === 'awaiting_customer' ? this.waits.customer : undefined;
    const view = { workflowId: workflowInfo().workflowId, awaitingUntilMs: customer?.expiresMs, nowMs: Date.now() };
    setCurrentDetails(transcript ? conversationDetails(head, { transcript, ...view }) : head);
  }
}
