import { byUserId, LOOKUP_OPTIONS } from './args';
import { defineTool } from './tool';

export const getUserBilling = defineTool({
  name: 'get_user_billing',
  description: 'Get billing info by user_id',
  args: byUserId,
  ...LOOKUP_OPTIONS,
  async handler({ user_id }, ctx) {
    const billing = (await ctx.data()).billing[String(user_id)];
    if (!billing)
      return ctx.envelope('billing-service', false, { error: `billing record for user ${user_id} not found` });
    return ctx.envelope('billing-service', true, { billing });
  },
});
