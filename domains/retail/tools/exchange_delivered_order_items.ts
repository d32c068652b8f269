import { z } from 'zod';
import type { Order, RetailDB } from '../db';
import { snapshot } from '../db';
import { RetailToolError } from '../errors';
import { checkItemsInOrder, getOrder, getPaymentMethod, getVariant } from '../lookup';
import { pyRound } from '../python/float';
import { PythonInt } from '../python/int';
import { comparePyStr } from '../python/json';
import { orderIdArg, priceDifferencePaymentArg } from './order-args';
import { defineRetailTool } from '../define-tool';

const args = z.strictObject({
  order_id: orderIdArg,
  item_ids: z
    .array(z.string())
    .describe("The item ids to be exchanged, each such as '1008292230'. There could be duplicate items in the list."),
  new_item_ids: z
    .array(z.string())
    .describe(
      "The item ids to be exchanged for, each such as '1008292230'. There could be duplicate items in the list. Each new item id should match the item id in the same position and be of the same product.",
    ),
  payment_method_id: priceDifferencePaymentArg,
});

function handler(db: RetailDB, { order_id, item_ids, new_item_ids, payment_method_id }: z.infer<typeof args>): Order {
  const order = getOrder(db, order_id);
  if (order.status !== 'delivered') throw new RetailToolError('Non-delivered order cannot be exchanged');

  checkItemsInOrder(order, item_ids, (itemId) => `Number of ${itemId} not found.`);

  if (item_ids.length !== new_item_ids.length) {
    throw new RetailToolError('The number of items to be exchanged should match.');
  }

  // The reference starts from the int 0: with no items, round(0, 2) stays an int.
  let diffPrice: number | undefined;
  for (let i = 0; i < item_ids.length; i++) {
    const itemId = item_ids[i]!;
    const newItemId = new_item_ids[i]!;
    const item = order.items.find((candidate) => candidate.item_id === itemId);
    if (item === undefined) throw new RetailToolError(`Item ${itemId} not found`);
    const variant = getVariant(db, item.product_id, newItemId);
    if (!variant.available) throw new RetailToolError(`New item ${newItemId} not found or available`);
    diffPrice = (diffPrice ?? 0) + (variant.price - item.price);
  }
  const difference = diffPrice === undefined ? 0 : pyRound(diffPrice, 2);

  const paymentMethod = getPaymentMethod(db, order.user_id, payment_method_id);
  if (paymentMethod.source === 'gift_card' && paymentMethod.balance < difference) {
    throw new RetailToolError('Insufficient gift card balance to pay for the price difference');
  }

  order.status = 'exchange requested';
  order.exchange_items = [...item_ids].sort(comparePyStr);
  order.exchange_new_items = [...new_item_ids].sort(comparePyStr);
  order.exchange_payment_method_id = payment_method_id;
  order.exchange_price_difference = diffPrice === undefined ? new PythonInt(0) : difference;
  return snapshot(order);
}

export const exchange_delivered_order_items = defineRetailTool<z.infer<typeof args>, Order>({
  name: 'exchange_delivered_order_items',
  kind: 'write',
  description:
    'Exchange items in a delivered order to new items of the same product type. For a delivered order, return or exchange can be only done once by the agent. The agent needs to explain the exchange detail and ask for explicit user confirmation (yes/no) to proceed.',
  args,
  handler,
});
