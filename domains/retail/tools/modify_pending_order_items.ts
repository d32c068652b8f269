import { z } from 'zod';
import type { Order, RetailDB, Variant } from '../db';
import { snapshot } from '../db';
import { RetailToolError } from '../errors';
import { checkItemsInOrder, getOrder, getPaymentMethod, getVariant } from '../lookup';
import { pyRound } from '../python/float';
import { orderIdArg, priceDifferencePaymentArg } from './order-args';
import { defineRetailTool } from '../define-tool';

const args = z.strictObject({
  order_id: orderIdArg,
  item_ids: z
    .array(z.string())
    .describe("The item ids to be modified, each such as '1008292230'. There could be duplicate items in the list."),
  new_item_ids: z
    .array(z.string())
    .describe(
      "The item ids to be modified for, each such as '1008292230'. There could be duplicate items in the list. Each new item id should match the item id in the same position and be of the same product.",
    ),
  payment_method_id: priceDifferencePaymentArg,
});

function handler(db: RetailDB, { order_id, item_ids, new_item_ids, payment_method_id }: z.infer<typeof args>): Order {
  const order = getOrder(db, order_id);
  if (order.status !== 'pending') throw new RetailToolError('Non-pending order cannot be modified');

  checkItemsInOrder(order, item_ids, (itemId) => `${itemId} not found`);

  if (item_ids.length !== new_item_ids.length) {
    throw new RetailToolError('The number of items to be exchanged should match');
  }

  let diffPrice = 0;
  // As in the reference, `variant` outlives the loop: every modified item below gets the price and
  // options of the LAST new item (its item id is its own).
  let variant: Variant | undefined;
  for (let i = 0; i < item_ids.length; i++) {
    const itemId = item_ids[i]!;
    const newItemId = new_item_ids[i]!;
    if (itemId === newItemId) throw new RetailToolError('The new item id should be different from the old item id');
    const item = order.items.find((candidate) => candidate.item_id === itemId);
    if (item === undefined) throw new RetailToolError(`Item ${itemId} not found`);
    variant = getVariant(db, item.product_id, newItemId);
    if (!variant.available) throw new RetailToolError(`New item ${newItemId} not found or available`);
    diffPrice += variant.price - item.price;
  }

  const paymentMethod = getPaymentMethod(db, order.user_id, payment_method_id);
  if (paymentMethod.source === 'gift_card' && paymentMethod.balance < diffPrice) {
    throw new RetailToolError('Insufficient gift card balance to pay for the new item');
  }

  // The difference is not rounded here (the amount may read 12.340000000000003); the balance is.
  order.payment_history.push({
    transaction_type: diffPrice > 0 ? 'payment' : 'refund',
    amount: Math.abs(diffPrice),
    payment_method_id,
  });
  if (paymentMethod.source === 'gift_card') {
    paymentMethod.balance = pyRound(paymentMethod.balance - diffPrice, 2);
  }

  for (let i = 0; i < item_ids.length; i++) {
    const itemId = item_ids[i]!;
    const item = order.items.find((candidate) => candidate.item_id === itemId);
    if (item === undefined) throw new RetailToolError(`Item ${itemId} not found`);
    item.item_id = new_item_ids[i]!;
    item.price = variant!.price;
    item.options = { ...variant!.options };
  }
  order.status = 'pending (item modified)';
  return snapshot(order);
}

export const modify_pending_order_items = defineRetailTool<z.infer<typeof args>, Order>({
  name: 'modify_pending_order_items',
  kind: 'write',
  description:
    'Modify items in a pending order to new items of the same product type. For a pending order, this function can only be called once. The agent needs to explain the exchange detail and ask for explicit user confirmation (yes/no) to proceed.',
  args,
  handler,
});
