import { byUserId, defineSupportTool, FOR_PRINCIPAL, LOOKUP_OPTIONS } from './args';

export const getUserProfile = defineSupportTool({
  name: 'get_user_profile',
  description: 'Get user profile by user_id',
  args: byUserId,
  ...LOOKUP_OPTIONS,
  ...FOR_PRINCIPAL,
  // A refund decision needs the tier and country, not the person's name.
  sensitive: ['user.name'],
  async handler({ user_id }, ctx) {
    const user = (await ctx.services.data()).users[String(user_id)];
    if (!user) return ctx.envelope('users-service', false, { error: `user ${user_id} not found` });
    return ctx.envelope('users-service', true, { user });
  },
});
