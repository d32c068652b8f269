import { z } from 'zod';
import type { RetailDB, User } from '../db';
import { snapshot } from '../db';
import { getUser } from '../lookup';
import { defineRetailTool } from '../define-tool';

const args = z.strictObject({
  user_id: z.string().describe("The user id, such as 'sara_doe_496'."),
});

function handler(db: RetailDB, { user_id }: z.infer<typeof args>): User {
  return snapshot(getUser(db, user_id));
}

export const get_user_details = defineRetailTool<z.infer<typeof args>, User>({
  name: 'get_user_details',
  kind: 'read',
  description: 'Get the details of a user, including their orders.',
  args,
  handler,
  principalArg: 'user_id',
});
