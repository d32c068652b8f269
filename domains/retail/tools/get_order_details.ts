import { z } from 'zod';
import type { Order, RetailDB } from '../db';
import { snapshot } from '../db';
import { getOrder } from '../lookup';
import type { RetailTool } from './tool';

const args = z.strictObject({
  order_id: z
    .string()
    .describe("The order id, such as '#W0000000'. Be careful there is a '#' symbol at the beginning of the order id."),
});

function handler(db: RetailDB, { order_id }: z.infer<typeof args>): Order {
  return snapshot(getOrder(db, order_id));
}

export const get_order_details: RetailTool<z.infer<typeof args>, Order> = {
  name: 'get_order_details',
  kind: 'read',
  description: 'Get the status and details of an order.',
  args,
  handler,
};
