import { z } from 'zod';
import type { Order, RetailDB } from '../db';
import { snapshot } from '../db';
import { RetailToolError } from '../errors';
import { getOrder, isPendingOrder } from '../lookup';
import { addressArgs, userAddress } from './address';
import { orderIdArg } from './order-args';
import { defineRetailTool } from '../define-tool';

const args = z.strictObject({
  order_id: orderIdArg,
  ...addressArgs,
});

function handler(db: RetailDB, input: z.infer<typeof args>): Order {
  const order = getOrder(db, input.order_id);
  if (!isPendingOrder(order)) throw new RetailToolError('Non-pending order cannot be modified');
  order.address = userAddress(input);
  return snapshot(order);
}

export const modify_pending_order_address = defineRetailTool<z.infer<typeof args>, Order>({
  name: 'modify_pending_order_address',
  kind: 'write',
  description:
    'Modify the shipping address of a pending order. The agent needs to explain the modification detail and ask for explicit user confirmation (yes/no) to proceed.',
  args,
  handler,
});
