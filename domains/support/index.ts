// The support domain: refunds for a subscription service. Tools that read users, billing records
// and policy documents, and one that refunds (an effect: approved by an operator, reconciled by
// idempotency key, bounded by the refund policy).
import type { Domain } from '../../common/domain';
import { SUPPORT_PRINCIPAL } from './principal';
import { REFUND_RULES } from './refund-rules';
import type { SupportServices } from './services';
import { SUPPORT_TOOLS } from './tools/index';

export type { SupportServices } from './services';

export const supportDomain: Domain<SupportServices> = {
  name: 'support',
  tools: SUPPORT_TOOLS,
  policyText:
    '- Some tools change the world (e.g. issue_refund): an operator approves or rejects each such call. A rejection arrives as an observation; respect it and do not ask again.',
  policyRules: REFUND_RULES,
  principal: SUPPORT_PRINCIPAL,
};
