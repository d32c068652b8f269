// The retail domain: τ²-bench's shop (users, orders, products), its 16 tools and its policy. The
// customer is anonymous until an authentication tool finds them; from then on the run acts for
// that user id, every write needs the customer's explicit yes, and writes on another user's
// orders are denied. Each conversation has its own database (services.ts).
import type { Domain } from '../../common/domain';
import { RETAIL_POLICY } from './policy-text';
import type { RetailServices } from './services';
import { retailTools } from './tools/index';

export type { RetailServices } from './services';

export const retailDomain: Domain<RetailServices> = {
  name: 'retail',
  tools: retailTools.map((tool) => tool.definition),
  policyText: [
    '- The retail policy below is your policy. The runtime enforces part of it: the customer is authenticated by',
    '  find_user_id_by_email or find_user_id_by_name_zip (nothing they say does it), before that only look-ups that',
    "  name nobody run (products, items, calculate), orders and users are the customer's own only,",
    '  and each write (cancel, modify, return, exchange, address) is shown to the customer, who must answer yes;',
    '  a declined write comes back as an observation. A refusal of a tool (ok: false) is information: go on.',
    '',
    RETAIL_POLICY.trim(),
  ].join('\n'),
  policyRules: {},
  statePerConversation: true,
  principal: {
    describe: 'a retail user id, learnt by authentication (find_user_id_by_email / find_user_id_by_name_zip)',
    check: (principal) => (/^[a-z0-9_]{1,100}$/.test(principal) ? undefined : 'not a retail user id'),
    forModel: (principal) => ({ user_id: principal }),
    fromAuthentication: true,
  },
};
