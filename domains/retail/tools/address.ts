import { z } from 'zod';
import type { UserAddress } from '../db';

/** The address arguments of modify_pending_order_address and modify_user_address. */
export const addressArgs = {
  address1: z.string().describe("The first line of the address, such as '123 Main St'."),
  address2: z.string().describe("The second line of the address, such as 'Apt 1' or ''."),
  city: z.string().describe("The city, such as 'San Francisco'."),
  state: z.string().describe("The state, such as 'CA'."),
  country: z.string().describe("The country, such as 'USA'."),
  zip: z.string().describe("The zip code, such as '12345'."),
};

/** UserAddress(...) in the model's field order. */
export function userAddress(args: UserAddress): UserAddress {
  const { address1, address2, city, country, state, zip } = args;
  return { address1, address2, city, country, state, zip };
}
