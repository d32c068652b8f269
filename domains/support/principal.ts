// Whom a support run acts for: a user id of the support data, a positive 32-bit integer written
// in decimal ("42"). The runtime carries it as an opaque string; the support tools compare their
// user_id argument with it, and the model sees it as the number it passes to them.
import type { PrincipalRule } from '../../common/domain';

const MAX_USER_ID = 2_147_483_647;

export const SUPPORT_PRINCIPAL: PrincipalRule = {
  describe: 'a user id: a positive integer up to 2147483647, in decimal ("42")',
  check(principal) {
    if (!/^[1-9][0-9]{0,9}$/.test(principal) || Number(principal) > MAX_USER_ID)
      return `"${principal.slice(0, 32)}" is not a support user id (a positive integer up to ${MAX_USER_ID}, e.g. 42)`;
    return undefined;
  },
  forModel: (principal) => ({ user_id: Number(principal) }),
};
