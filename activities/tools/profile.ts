import type { Observation, ToolInput } from '../../common/types';
import { envelope } from '../envelope';
import type { DataSource } from './data-source';

export function createGetUserProfile(data: DataSource) {
  return async function get_user_profile(input: ToolInput): Promise<Observation> {
    const userId = Number(input.args.user_id);
    const user = (await data()).users[String(userId)];
    if (!user) return envelope('get_user_profile', 'users-service', false, { error: `user ${userId} not found` });
    return envelope('get_user_profile', 'users-service', true, { user });
  };
}
