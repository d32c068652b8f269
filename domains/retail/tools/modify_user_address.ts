import { z } from 'zod';
import type { RetailDB, User } from '../db';
import { snapshot } from '../db';
import { getUser } from '../lookup';
import { addressArgs, userAddress } from './address';
import { defineRetailTool } from '../define-tool';

const args = z.strictObject({
  user_id: z.string().describe("The user id, such as 'sara_doe_496'."),
  ...addressArgs,
});

function handler(db: RetailDB, input: z.infer<typeof args>): User {
  const user = getUser(db, input.user_id);
  user.address = userAddress(input);
  return snapshot(user);
}

export const modify_user_address = defineRetailTool<z.infer<typeof args>, User>({
  name: 'modify_user_address',
  kind: 'write',
  description:
    'Modify the default address of a user. The agent needs to explain the modification detail and ask for explicit user confirmation (yes/no) to proceed.',
  args,
  handler,
});
