import type { Observation, ToolInput } from '../../common/types';
import { envelope } from '../envelope';
import type { DataSource } from './data-source';

export function createGetUserBilling(data: DataSource) {
  return async function get_user_billing(input: ToolInput): Promise<Observation> {
    const userId = Number(input.args.user_id);
    const billing = (await data()).billing[String(userId)];
    if (!billing) {
      return envelope('get_user_billing', 'billing-service', false, {
        error: `billing record for user ${userId} not found`,
      });
    }
    return envelope('get_user_billing', 'billing-service', true, { billing });
  };
}
