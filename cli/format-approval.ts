// How the CLI and the demo show what awaits a person, and what an answer did.
import type { ApprovalReceipt, PendingApproval } from '../common/conversation/approvals';
import { terminalSafe } from './terminal-text';

/** "issue_refund {"amount_usd":49,...} for USD 49.00" or "escalation: <reason>". */
export function describePending(p: PendingApproval): string {
  if (p.kind === 'escalation') return terminalSafe(`escalation: ${JSON.stringify(p.reason ?? '')}`);
  const amount = p.amount_usd !== undefined ? ` for USD ${p.amount_usd.toFixed(2)}` : '';
  return terminalSafe(`${p.tool} ${JSON.stringify(p.args ?? {})}${amount}`);
}

/** The `status` block of a run that waits for a person. */
export function formatPending(p: PendingApproval, workflowId = 'ID'): string[] {
  const answer =
    p.kind === 'escalation'
      ? `agent answer ${workflowId} TEXT | approve ${workflowId} | reject ${workflowId} [--reason TEXT]`
      : `agent approve ${workflowId} | reject ${workflowId} [--reason TEXT]`;
  const lines = [
    `awaiting:     ${p.kind === 'escalation' ? 'a person (the model escalated)' : 'approval'} of step ${p.step}: ${describePending(p)}`,
    `  call id:    ${p.id}`,
    `  expires:    ${p.expires_at.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}`,
    `  answer:     ${answer}`,
  ];
  return lines.map(terminalSafe);
}

const VERB = { approve: 'approved', reject: 'rejected', answer: 'answered' } as const;

export function formatReceipt(workflowId: string, receipt: ApprovalReceipt): string {
  if (receipt.duplicate)
    return terminalSafe(`${receipt.id} in ${workflowId} was already ${VERB[receipt.decision]}: nothing changed`);
  return terminalSafe(`${VERB[receipt.decision]} ${receipt.id} in ${workflowId}: ${describePending(receipt.pending)}`);
}
