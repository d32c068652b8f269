// The reference toolkit's private helpers (_get_order, _get_user, …): the same lookups, the same errors.
import type { Order, PaymentMethod, Product, RetailDB, User, Variant } from './db';
import { RetailToolError } from './errors';

/** Python's `key in dict` (own keys only: "constructor" or "__proto__" are not ids). */
export function has(record: object, key: string): boolean {
  return Object.hasOwn(record, key);
}

export function getOrder(db: RetailDB, orderId: string): Order {
  if (!has(db.orders, orderId)) throw new RetailToolError('Order not found');
  return db.orders[orderId]!;
}

export function getUser(db: RetailDB, userId: string): User {
  if (!has(db.users, userId)) throw new RetailToolError('User not found');
  return db.users[userId]!;
}

export function getProduct(db: RetailDB, productId: string): Product {
  if (!has(db.products, productId)) throw new RetailToolError('Product not found');
  return db.products[productId]!;
}

/** The variant with this item id, searching the products in order. */
export function getItem(db: RetailDB, itemId: string): Variant {
  for (const product of Object.values(db.products)) {
    if (has(product.variants, itemId)) return product.variants[itemId]!;
  }
  throw new RetailToolError('Item not found');
}

export function getVariant(db: RetailDB, productId: string, variantId: string): Variant {
  const product = getProduct(db, productId);
  if (!has(product.variants, variantId)) throw new RetailToolError('Variant not found');
  return product.variants[variantId]!;
}

export function getPaymentMethod(db: RetailDB, userId: string, paymentMethodId: string): PaymentMethod {
  const user = getUser(db, userId);
  if (!has(user.payment_methods, paymentMethodId)) throw new RetailToolError('Payment method not found');
  return user.payment_methods[paymentMethodId]!;
}

/** `"pending" in order.status`: true for "pending" and "pending (item modified)". */
export function isPendingOrder(order: Order): boolean {
  return order.status.includes('pending');
}

/** Python's list.count(x) for a list of strings. */
export function count(list: readonly string[], x: string): number {
  let n = 0;
  for (const item of list) if (item === x) n++;
  return n;
}

/** Each of `itemIds` is in the order at least as often as it is listed; else `notFound(itemId)`, the tool's own message. */
export function checkItemsInOrder(
  order: Order,
  itemIds: readonly string[],
  notFound: (itemId: string) => string,
): void {
  const allItemIds = order.items.map((item) => item.item_id);
  for (const itemId of itemIds) {
    if (count(itemIds, itemId) > count(allItemIds, itemId)) throw new RetailToolError(notFound(itemId));
  }
}
