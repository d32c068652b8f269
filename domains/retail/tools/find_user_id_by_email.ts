import { z } from 'zod';
import type { RetailDB } from '../db';
import { RetailToolError } from '../errors';
import { pyLower } from '../python/str';
import { defineRetailTool } from '../define-tool';

const args = z.strictObject({
  email: z.string().describe("The email of the user, such as 'something@example.com'."),
});

function handler(db: RetailDB, { email }: z.infer<typeof args>): string {
  const wanted = pyLower(email);
  for (const [userId, user] of Object.entries(db.users)) {
    if (pyLower(user.email) === wanted) return userId;
  }
  throw new RetailToolError('User not found');
}

export const find_user_id_by_email = defineRetailTool<z.infer<typeof args>, string>({
  name: 'find_user_id_by_email',
  kind: 'read',
  description: 'Find user id by email. If the user is not found, the function will return an error message.',
  args,
  handler,
  authenticates: true,
});
