import { z } from 'zod';
import type { Order, RetailDB } from '../db';
import { snapshot } from '../db';
import { RetailToolError } from '../errors';
import { checkItemsInOrder, getOrder, getPaymentMethod, getUser } from '../lookup';
import { comparePyStr } from '../python/json';
import { orderIdArg, priceDifferencePaymentArg } from './order-args';
import { defineRetailTool } from '../define-tool';

const args = z.strictObject({
  order_id: orderIdArg,
  item_ids: z
    .array(z.string())
    .describe("The item ids to be returned, each such as '1008292230'. There could be duplicate items in the list."),
  payment_method_id: priceDifferencePaymentArg,
});

function handler(db: RetailDB, { order_id, item_ids, payment_method_id }: z.infer<typeof args>): Order {
  const order = getOrder(db, order_id);
  if (order.status !== 'delivered') throw new RetailToolError('Non-delivered order cannot be returned');

  const user = getUser(db, order.user_id);
  const paymentMethod = getPaymentMethod(db, user.user_id, payment_method_id);
  if (paymentMethod.source !== 'gift_card') {
    const first = order.payment_history[0];
    if (first === undefined) throw new RetailToolError('list index out of range', 'IndexError');
    if (payment_method_id !== first.payment_method_id) {
      throw new RetailToolError('Payment method should be the original payment method');
    }
  }

  checkItemsInOrder(order, item_ids, () => 'Some item not found');

  order.status = 'return requested';
  order.return_items = [...item_ids].sort(comparePyStr);
  order.return_payment_method_id = payment_method_id;
  return snapshot(order);
}

export const return_delivered_order_items = defineRetailTool<z.infer<typeof args>, Order>({
  name: 'return_delivered_order_items',
  kind: 'write',
  description:
    "Return some items of a delivered order. The order status will be changed to 'return requested'. The agent needs to explain the return detail and ask for explicit user confirmation (yes/no) to proceed. The user will receive follow-up email for how and where to return the item.",
  args,
  handler,
});
