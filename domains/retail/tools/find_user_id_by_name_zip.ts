import { z } from 'zod';
import type { RetailDB } from '../db';
import { RetailToolError } from '../errors';
import { pyLower } from '../python/str';
import { defineRetailTool } from '../define-tool';

const args = z.strictObject({
  first_name: z.string().describe("The first name of the customer, such as 'John'."),
  last_name: z.string().describe("The last name of the customer, such as 'Doe'."),
  zip: z.string().describe("The zip code of the customer, such as '12345'."),
});

function handler(db: RetailDB, { first_name, last_name, zip }: z.infer<typeof args>): string {
  const first = pyLower(first_name);
  const last = pyLower(last_name);
  for (const [userId, user] of Object.entries(db.users)) {
    if (pyLower(user.name.first_name) === first && pyLower(user.name.last_name) === last && user.address.zip === zip) {
      return userId;
    }
  }
  throw new RetailToolError('User not found');
}

export const find_user_id_by_name_zip = defineRetailTool<z.infer<typeof args>, string>({
  name: 'find_user_id_by_name_zip',
  kind: 'read',
  description:
    'Find user id by first name, last name, and zip code. If the user is not found, the function will return an error message. By default, find user id by email, and only call this function if the user is not found by email or cannot remember email.',
  args,
  handler,
  authenticates: true,
});
