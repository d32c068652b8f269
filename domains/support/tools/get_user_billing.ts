import { byUserId, defineSupportTool, FOR_PRINCIPAL, LOOKUP_OPTIONS } from './args';

export const getUserBilling = defineSupportTool({
  name: 'get_user_billing',
  description: 'Get billing info by user_id',
  args: byUserId,
  ...LOOKUP_OPTIONS,
  ...FOR_PRINCIPAL,
  async handler({ user_id }, ctx) {
    const billing = (await ctx.services.data()).billing[String(user_id)];
    if (!billing)
      return ctx.envelope('billing-service', false, { error: `billing record for user ${user_id} not found` });
    return ctx.envelope('billing-service', true, { billing });
  },
});
