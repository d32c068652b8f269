import { z } from 'zod';
import type { Order, OrderPayment, RetailDB } from '../db';
import { snapshot } from '../db';
import { RetailToolError } from '../errors';
import { getOrder, getPaymentMethod, getUser } from '../lookup';
import { pyRound } from '../python/float';
import { orderIdArg } from './order-args';
import { defineRetailTool } from '../define-tool';

const args = z.strictObject({
  order_id: orderIdArg,
  reason: z
    .string()
    .describe("The reason for cancellation, which should be either 'no longer needed' or 'ordered by mistake'."),
});

function handler(db: RetailDB, { order_id, reason }: z.infer<typeof args>): Order {
  const order = getOrder(db, order_id);
  if (order.status !== 'pending') throw new RetailToolError('Non-pending order cannot be cancelled');
  if (reason !== 'no longer needed' && reason !== 'ordered by mistake') throw new RetailToolError('Invalid reason');

  // Every entry of the payment history is refunded, a refund too; gift cards at once.
  const refunds: OrderPayment[] = [];
  for (const payment of order.payment_history) {
    const paymentId = payment.payment_method_id;
    refunds.push({ transaction_type: 'refund', amount: payment.amount, payment_method_id: paymentId });
    const user = getUser(db, order.user_id);
    const paymentMethod = getPaymentMethod(db, user.user_id, paymentId);
    if (paymentMethod.source === 'gift_card') {
      paymentMethod.balance = pyRound(paymentMethod.balance + payment.amount, 2);
    }
  }

  order.status = 'cancelled';
  order.cancel_reason = reason;
  order.payment_history.push(...refunds);
  return snapshot(order);
}

export const cancel_pending_order = defineRetailTool<z.infer<typeof args>, Order>({
  name: 'cancel_pending_order',
  kind: 'write',
  description:
    "Cancel a pending order. If the order is already processed or delivered, it cannot be cancelled. The agent needs to explain the cancellation detail and ask for explicit user confirmation (yes/no) to proceed. If the user confirms, the order status will be changed to 'cancelled' and the payment will be refunded. The refund will be added to the user's gift card balance immediately if the payment was made using a gift card, otherwise the refund would take 5-7 business days to process. The function returns the order details after the cancellation.",
  args,
  handler,
});
