import { z } from 'zod';
import type { Order, RetailDB } from '../db';
import { snapshot } from '../db';
import { RetailToolError } from '../errors';
import { getOrder, getPaymentMethod, isPendingOrder } from '../lookup';
import { pyRound } from '../python/float';
import { orderIdArg, priceDifferencePaymentArg } from './order-args';
import { defineRetailTool } from '../define-tool';

const args = z.strictObject({
  order_id: orderIdArg,
  payment_method_id: priceDifferencePaymentArg,
});

function handler(db: RetailDB, { order_id, payment_method_id }: z.infer<typeof args>): Order {
  const order = getOrder(db, order_id);
  if (!isPendingOrder(order)) throw new RetailToolError('Non-pending order cannot be modified');

  const paymentMethod = getPaymentMethod(db, order.user_id, payment_method_id);

  const first = order.payment_history[0];
  if (order.payment_history.length !== 1 || first!.transaction_type !== 'payment') {
    throw new RetailToolError('There should be exactly one payment for a pending order');
  }
  if (first!.payment_method_id === payment_method_id) {
    throw new RetailToolError('The new payment method should be different from the current one');
  }

  const amount = first!.amount;
  if (paymentMethod.source === 'gift_card' && paymentMethod.balance < amount) {
    throw new RetailToolError('Insufficient gift card balance to pay for the order');
  }

  order.payment_history.push(
    { transaction_type: 'payment', amount, payment_method_id },
    { transaction_type: 'refund', amount, payment_method_id: first!.payment_method_id },
  );

  if (paymentMethod.source === 'gift_card') {
    paymentMethod.balance = pyRound(paymentMethod.balance - amount, 2);
  }

  const oldPaymentMethod = getPaymentMethod(db, order.user_id, first!.payment_method_id);
  if (oldPaymentMethod.source === 'gift_card') {
    oldPaymentMethod.balance = pyRound(oldPaymentMethod.balance + amount, 2);
  }
  return snapshot(order);
}

export const modify_pending_order_payment = defineRetailTool<z.infer<typeof args>, Order>({
  name: 'modify_pending_order_payment',
  kind: 'write',
  description:
    'Modify the payment method of a pending order. The agent needs to explain the modification detail and ask for explicit user confirmation (yes/no) to proceed.',
  args,
  handler,
});
