import { z } from 'zod';
import type { Order, RetailDB } from '../db';
import { snapshot } from '../db';
import { getOrder } from '../lookup';
import { orderIdArg } from './order-args';
import { defineRetailTool } from '../define-tool';

const args = z.strictObject({
  order_id: orderIdArg,
});

function handler(db: RetailDB, { order_id }: z.infer<typeof args>): Order {
  return snapshot(getOrder(db, order_id));
}

export const get_order_details = defineRetailTool<z.infer<typeof args>, Order>({
  name: 'get_order_details',
  kind: 'read',
  description: 'Get the status and details of an order.',
  args,
  handler,
  namesPerson: true,
});
