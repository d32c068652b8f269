// The retail database, as τ²-bench's data_model.py declares it (RetailDB: products, users, orders). Field
// names, order and types follow the pydantic models; optional fields are null when absent, as model_dump()
// writes them. Every number is a Python float (all numeric fields of the model are floats), except where a
// tool stores a Python int in a float field (see PythonInt).
import { sharedAcrossRuns } from '../../common/shared-across-runs';
import { z } from 'zod';
import { PythonInt } from './python/int';

export interface Variant {
  item_id: string;
  options: Record<string, string>;
  available: boolean;
  price: number;
}

export interface Product {
  name: string;
  product_id: string;
  variants: Record<string, Variant>;
}

export interface UserName {
  first_name: string;
  last_name: string;
}

export interface UserAddress {
  address1: string;
  address2: string;
  city: string;
  country: string;
  state: string;
  zip: string;
}

export interface CreditCard {
  source: 'credit_card';
  id: string;
  brand: string;
  last_four: string;
}

export interface Paypal {
  source: 'paypal';
  id: string;
}

export interface GiftCard {
  source: 'gift_card';
  id: string;
  balance: number;
}

export type PaymentMethod = CreditCard | GiftCard | Paypal;

export interface User {
  user_id: string;
  name: UserName;
  address: UserAddress;
  email: string;
  payment_methods: Record<string, PaymentMethod>;
  orders: string[];
}

export interface OrderFulfillment {
  tracking_id: string[];
  item_ids: string[];
}

export interface OrderItem {
  name: string;
  product_id: string;
  item_id: string;
  price: number;
  options: Record<string, string>;
}

export type OrderPaymentType = 'payment' | 'refund';

export interface OrderPayment {
  transaction_type: OrderPaymentType;
  amount: number;
  payment_method_id: string;
}

export const ORDER_STATUSES = [
  'processed',
  'pending',
  'pending (item modified)',
  'delivered',
  'cancelled',
  'exchange requested',
  'return requested',
] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

export const CANCEL_REASONS = ['no longer needed', 'ordered by mistake'] as const;
export type CancelReason = (typeof CANCEL_REASONS)[number];

export interface Order {
  order_id: string;
  user_id: string;
  address: UserAddress;
  items: OrderItem[];
  status: OrderStatus;
  fulfillments: OrderFulfillment[];
  payment_history: OrderPayment[];
  cancel_reason: CancelReason | null;
  exchange_items: string[] | null;
  exchange_new_items: string[] | null;
  exchange_payment_method_id: string | null;
  /** A float, or the int 0 that an exchange of no items stores (round(0, 2) is an int). */
  exchange_price_difference: number | PythonInt | null;
  return_items: string[] | null;
  return_payment_method_id: string | null;
}

export interface RetailDB {
  products: Record<string, Product>;
  users: Record<string, User>;
  orders: Record<string, Order>;
}

// The pydantic validation of a stored database (RetailDB.load): unknown fields of the nested models are
// dropped (pydantic's default), unknown top-level fields refused (tau2's DB forbids extras), absent optional
// fields become null. Objects come out in the models' field order.
const options = sharedAcrossRuns('domains/retail/db:options', () => z.record(z.string(), z.string()));
const variant = sharedAcrossRuns('domains/retail/db:variant', () =>
  z.object({ item_id: z.string(), options, available: z.boolean(), price: z.number() }),
);
const product = sharedAcrossRuns('domains/retail/db:product', () =>
  z.object({ name: z.string(), product_id: z.string(), variants: z.record(z.string(), variant) }),
);
const address = sharedAcrossRuns('domains/retail/db:address', () =>
  z.object({
    address1: z.string(),
    address2: z.string(),
    city: z.string(),
    country: z.string(),
    state: z.string(),
    zip: z.string(),
  }),
);
const paymentMethod = sharedAcrossRuns('domains/retail/db:paymentMethod', () =>
  z.discriminatedUnion('source', [
    z.object({ source: z.literal('credit_card'), id: z.string(), brand: z.string(), last_four: z.string() }),
    z.object({ source: z.literal('gift_card'), id: z.string(), balance: z.number() }),
    z.object({ source: z.literal('paypal'), id: z.string() }),
  ]),
);
const user = sharedAcrossRuns('domains/retail/db:user', () =>
  z.object({
    user_id: z.string(),
    name: z.object({ first_name: z.string(), last_name: z.string() }),
    address,
    email: z.string(),
    payment_methods: z.record(z.string(), paymentMethod),
    orders: z.array(z.string()),
  }),
);
const optional = <T extends z.ZodType>(schema: T) => schema.nullable().default(null);
const order = sharedAcrossRuns('domains/retail/db:order', () =>
  z.object({
    order_id: z.string(),
    user_id: z.string(),
    address,
    items: z.array(
      z.object({ name: z.string(), product_id: z.string(), item_id: z.string(), price: z.number(), options }),
    ),
    status: z.enum(ORDER_STATUSES),
    fulfillments: z.array(z.object({ tracking_id: z.array(z.string()), item_ids: z.array(z.string()) })),
    payment_history: z.array(
      z.object({ transaction_type: z.enum(['payment', 'refund']), amount: z.number(), payment_method_id: z.string() }),
    ),
    cancel_reason: optional(z.enum(CANCEL_REASONS)),
    exchange_items: optional(z.array(z.string())),
    exchange_new_items: optional(z.array(z.string())),
    exchange_payment_method_id: optional(z.string()),
    exchange_price_difference: optional(z.number()),
    return_items: optional(z.array(z.string())),
    return_payment_method_id: optional(z.string()),
  }),
);
export const retailDbSchema = sharedAcrossRuns('domains/retail/db:retailDbSchema', () =>
  z.strictObject({
    products: z.record(z.string(), product),
    users: z.record(z.string(), user),
    orders: z.record(z.string(), order),
  }),
);

/** A database from its stored JSON (parsed), validated as RetailDB.model_validate does. */
export function parseRetailDb(raw: unknown): RetailDB {
  return retailDbSchema.parse(raw) satisfies RetailDB;
}

/** A deep copy: what a tool returns is a snapshot (the model_dump at return), never a live part of the db. */
export function snapshot<T>(value: T): T {
  if (value === null || typeof value !== 'object' || value instanceof PythonInt) return value;
  if (Array.isArray(value)) return value.map((item: unknown) => snapshot(item)) as T;
  const out: Record<string, unknown> = {};
  const source = value as Record<string, unknown>;
  // Object.keys, not Object.entries: no pair array per field (a third faster on the 2 MB database).
  for (const key of Object.keys(source)) {
    const item = source[key];
    if (key === '__proto__')
      Object.defineProperty(out, key, { value: snapshot(item), enumerable: true, writable: true, configurable: true });
    else out[key] = snapshot(item);
  }
  return out as T;
}
