// Generated calls for the retail differential test: a sample of the database (every product, and users
// picked so that every kind of order and payment is there: each status, gift cards with low balances, orders
// paid by gift card, orders with the same item twice) and fast-check arbitraries of tool calls on it, valid
// and invalid, so that every error path of every tool is taken.
import * as fc from 'fast-check';
import type { GiftCard, Order, RetailDB, User } from '../../domains/retail/db';
import { snapshot } from '../../domains/retail/db';

export interface Call {
  tool: string;
  args: Record<string, unknown>;
}

const FEATURES: Record<string, (user: User, db: RetailDB) => boolean> = {
  pending: (u, db) => ordersOf(u, db).some((o) => o.status === 'pending'),
  delivered: (u, db) => ordersOf(u, db).some((o) => o.status === 'delivered'),
  processed: (u, db) => ordersOf(u, db).some((o) => o.status === 'processed'),
  cancelled: (u, db) => ordersOf(u, db).some((o) => o.status === 'cancelled'),
  lowGiftCardPending: (u, db) => lowGiftCard(u) && ordersOf(u, db).some((o) => o.status === 'pending'),
  lowGiftCardDelivered: (u, db) => lowGiftCard(u) && ordersOf(u, db).some((o) => o.status === 'delivered'),
  paidByGiftCard: (u, db) =>
    ordersOf(u, db).some(
      (o) => o.status === 'pending' && o.payment_history.some((p) => p.payment_method_id.startsWith('gift_card')),
    ),
  sameItemTwice: (u, db) => ordersOf(u, db).some((o) => new Set(o.items.map((i) => i.item_id)).size < o.items.length),
  manyPaymentMethods: (u) => Object.keys(u.payment_methods).length >= 3,
  manyItemsDelivered: (u, db) => ordersOf(u, db).some((o) => o.status === 'delivered' && o.items.length >= 4),
};

function ordersOf(user: User, db: RetailDB): Order[] {
  return user.orders.filter((id) => Object.hasOwn(db.orders, id)).map((id) => db.orders[id]!);
}

function lowGiftCard(user: User): boolean {
  return Object.values(user.payment_methods).some((p) => p.source === 'gift_card' && p.balance < 10);
}

/** Every product, and `size` users (with all their orders) covering each feature four times. */
export function sampleDb(full: RetailDB, size = 40): RetailDB {
  const users = Object.values(full.users);
  const chosen = new Set<string>();
  const covered = new Map<string, number>();
  for (const user of users) {
    const adds = Object.entries(FEATURES).filter(([name, has]) => (covered.get(name) ?? 0) < 4 && has(user, full));
    if (adds.length === 0) continue;
    chosen.add(user.user_id);
    for (const [name, has] of Object.entries(FEATURES)) {
      if (has(user, full)) covered.set(name, (covered.get(name) ?? 0) + 1);
    }
  }
  const stride = Math.max(1, Math.floor(users.length / size));
  for (let i = 0; chosen.size < size && i < users.length; i += stride) chosen.add(users[i]!.user_id);
  const sample: RetailDB = { products: snapshot(full.products), users: {}, orders: {} };
  for (const user of users) if (chosen.has(user.user_id)) sample.users[user.user_id] = snapshot(user);
  for (const [id, order] of Object.entries(full.orders)) {
    if (chosen.has(order.user_id)) sample.orders[id] = snapshot(order);
  }
  return sample;
}

// --- strings ------------------------------------------------------------------------------------------------

/** Ids that are not in the sample: empty, random, real ones of the full database, JavaScript's own keys. */
function foreignId(full: RetailDB, kind: 'order' | 'user' | 'product' | 'payment'): fc.Arbitrary<string> {
  const real = {
    order: Object.keys(full.orders).slice(0, 50),
    user: Object.keys(full.users).slice(0, 50),
    product: ['1234567890', '0000000000'],
    payment: ['gift_card_0000000', 'credit_card_0000000', 'paypal_0000000'],
  }[kind];
  return fc.oneof(
    fc.constantFrom('', ' ', '__proto__', 'constructor', 'toString', 'hasOwnProperty'),
    fc.constantFrom(...real),
    fc.string({ maxLength: 12 }),
  );
}

const text = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 16 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 8 }) },
  { weight: 1, arbitrary: fc.constantFrom('', '123 Main St', 'Apt 1', 'San Francisco', 'CA', 'USA', '94105') },
);

function caseVariant(s: string): fc.Arbitrary<string> {
  return fc.constantFrom(s, s, s.toUpperCase(), s.toLowerCase(), ` ${s}`, s.slice(1));
}

// --- calculate ------------------------------------------------------------------------------------------------

const ALPHABET = '0123456789+-*/(). ';

const literal = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 0, max: 9 }).map(String) },
  { weight: 4, arbitrary: fc.bigInt({ min: 0n, max: 10n ** 30n }).map(String) },
  {
    weight: 6,
    arbitrary: fc
      .tuple(fc.integer({ min: 0, max: 5000 }), fc.integer({ min: 0, max: 99 }))
      .map(([a, b]) => `${a}.${String(b).padStart(2, '0')}`),
  },
  { weight: 2, arbitrary: fc.constantFrom('0.1', '.5', '5.', '0.125', '2.675', '1.005', '00', '0.0', '00.5', '0.') },
  { weight: 1, arbitrary: fc.constantFrom('...', '()', '9' + '0'.repeat(330) + '.5', '1' + '0'.repeat(40)) },
);

const spaces = fc.constantFrom('', '', '', ' ', '  ');

// Powers of floats: glibc's pow and this one (exact, then rounded once) may differ in the last bit when the
// exact value lies within a hair of a rounding midpoint; repr shows it only for results of 16 digits or more.
// So the exponents are integral or half-integral and the results of float bases stay small; int ** int is
// exact in both.
const smallExponent = fc.constantFrom('2', '3', '0', '1', '-1', '-2', '0.5', '-0.5', '1.5', '2.5');
const power = fc.oneof(
  fc.tuple(fc.integer({ min: -12, max: 12 }).map(String), fc.oneof(smallExponent, fc.constant('10'))),
  fc.tuple(literal, smallExponent),
);

const expressionTree: fc.Arbitrary<string> = fc.letrec<{ e: string }>((tie) => ({
  e: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 4, arbitrary: literal },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom('-', '+', '--', '-+'), spaces, tie('e')).map((p) => p.join('')) },
    { weight: 1, arbitrary: fc.tuple(spaces, tie('e'), spaces).map(([a, e, b]) => `(${a}${e}${b})`) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          fc.oneof(
            literal,
            tie('e').map((e) => `(${e})`),
          ),
          fc.constantFrom('', 'x', '*x', '**x', '*()', '**()'),
          tie('e'),
        )
        .map(([f, a, x]) => `${f}(${a.replace('x', x)})`),
    },
    { weight: 1, arbitrary: fc.tuple(power, spaces).map(([[base, e], s]) => `(${base})${s}**${s}${e}`) },
    { weight: 1, arbitrary: fc.constantFrom('(-8)**(1/3)', '(-2.5)**0.25', '(-1)**0.5', '((-1)**0.5)*0') },
    {
      weight: 5,
      arbitrary: fc
        .tuple(tie('e'), spaces, fc.constantFrom('+', '-', '*', '/', '//', '+', '-', '*', '/'), spaces, tie('e'))
        .map((p) => p.join('')),
    },
  ),
})).e;

function mutate(s: string): fc.Arbitrary<string> {
  return fc
    .array(
      fc.tuple(fc.nat(), fc.constantFrom('delete', 'insert', 'replace'), fc.constantFrom(...ALPHABET, '**', '...')),
      {
        minLength: 1,
        maxLength: 3,
      },
    )
    .map((edits) => {
      let out = s;
      for (const [at, kind, ch] of edits) {
        const i = out.length === 0 ? 0 : at % out.length;
        if (kind === 'delete') out = out.slice(0, i) + out.slice(i + 1);
        else if (kind === 'insert') out = out.slice(0, i) + ch + out.slice(i);
        else out = out.slice(0, i) + ch + out.slice(i + 1);
      }
      return out;
    });
}

/**
 * Python computes any `a ** b` of ints exactly, for as long as it takes: an expression may have one `**` whose
 * exponent is a short literal, or the `**`s the tree above writes (small bases, small exponents).
 */
export function boundedPowers(s: string): boolean {
  const powers = s.match(/\*\*/g)?.length ?? 0;
  if (powers === 0) return true;
  if (powers > 1) return false;
  const after = /\*\*[\s(+-]*(\d*)/.exec(s);
  return after !== null && after[1]!.length <= 3;
}

export const expressionArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: expressionTree.filter((s) => s.length <= 300) },
  {
    weight: 3,
    arbitrary: expressionTree
      .filter((s) => s.length <= 200)
      .chain(mutate)
      .filter(boundedPowers),
  },
  {
    weight: 2,
    arbitrary: fc
      .array(
        literal.filter((l) => /^\d+\.\d\d$/.test(l)),
        { minLength: 1, maxLength: 5 },
      )
      .chain((prices) =>
        fc
          .array(fc.constantFrom(' + ', ' - ', ' * ', ' / ', '+', '-'), {
            minLength: prices.length - 1,
            maxLength: prices.length - 1,
          })
          .map((ops) => prices.map((p, i) => (i === 0 ? p : `${ops[i - 1]}${p}`)).join('')),
      ),
  },
  { weight: 2, arbitrary: fc.string({ unit: fc.constantFrom(...ALPHABET), maxLength: 14 }).filter(boundedPowers) },
  { weight: 1, arbitrary: fc.constantFrom('1e5', '2^3', '10 % 3', 'abs(-1)', '1,5', '１+1', '3 × 4', '2\n+2', '') },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }) },
);

/** One of `values`, with this weight in a oneof; none when there are no values. */
function weighted<T>(weight: number, values: readonly T[]): fc.WeightedArbitrary<T | ''> {
  return values.length > 0
    ? { weight, arbitrary: fc.constantFrom(...values) }
    : { weight: 0, arbitrary: fc.constant('') };
}

// --- calls on the sample -----------------------------------------------------------------------------------------

export function callArbitraries(sample: RetailDB, full: RetailDB) {
  const users = Object.values(sample.users);
  const orders = Object.values(sample.orders);
  const productIds = Object.keys(sample.products);
  const variantIds = Object.values(sample.products).flatMap((p) => Object.keys(p.variants));
  const paymentIds = users.flatMap((u) => Object.keys(u.payment_methods));

  const anyOrderId = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...orders.map((o) => o.order_id)) },
    { weight: 2, arbitrary: foreignId(full, 'order') },
  );
  const anyUserId = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...users.map((u) => u.user_id)) },
    { weight: 2, arbitrary: foreignId(full, 'user') },
  );
  const anyPaymentId = fc.oneof(fc.constantFrom(...paymentIds), foreignId(full, 'payment'));
  const anyProductOrItemId = fc.oneof(
    fc.constantFrom(...productIds),
    fc.constantFrom(...variantIds),
    foreignId(full, 'product'),
  );
  const address = fc.record({ address1: text, address2: text, city: text, state: text, country: text, zip: text });

  /** Calls about one user: mostly one of their orders and their payment methods, sometimes anybody's. */
  function callFor(user: User, focus: Order | undefined): fc.Arbitrary<Call> {
    const own = orders.filter((o) => o.user_id === user.user_id);
    const ownPayments = Object.keys(user.payment_methods);
    /** An order for a tool: mostly the user's own, in a status the tool accepts, but not always. */
    const orderFor = (...statuses: string[]): fc.Arbitrary<Order | string> => {
      const fits = (o: Order) => statuses.length === 0 || statuses.includes(o.status);
      return fc.oneof(
        weighted(8, focus !== undefined && fits(focus) ? [focus] : []),
        weighted(6, own.filter(fits)),
        weighted(2, own),
        weighted(2, orders.filter(fits)),
        weighted(1, orders),
        { weight: 1, arbitrary: foreignId(full, 'order') },
      );
    };
    const giftCards = ownPayments.filter((id) => user.payment_methods[id]!.source === 'gift_card');
    const paymentArb = fc.oneof(weighted(4, ownPayments), weighted(4, giftCards), {
      weight: 2,
      arbitrary: anyPaymentId,
    });
    const orderId = (o: Order | string) => (typeof o === 'string' ? o : o.order_id);

    /** Item ids of the order: a sub-multiset, sometimes with an id too many or a stranger. */
    const itemsOf = (o: Order | string): fc.Arbitrary<string[]> => {
      const ids = typeof o === 'string' ? [] : o.items.map((i) => i.item_id);
      const pick = ids.length > 0 ? fc.subarray(ids) : fc.constant<string[]>([]);
      return fc.oneof(
        { weight: 8, arbitrary: pick.filter((a) => a.length > 0 || ids.length === 0) },
        { weight: 1, arbitrary: pick },
        {
          weight: 1,
          arbitrary: pick.chain((a) => fc.constantFrom(...ids, ...variantIds.slice(0, 5), 'x').map((x) => [...a, x])),
        },
      );
    };
    /** New item ids for the given ones: other variants of the same product, available or not, or not. */
    const newItemsFor = (o: Order | string, itemIds: string[]): fc.Arbitrary<string[]> => {
      const items = typeof o === 'string' ? [] : o.items;
      const one = (itemId: string): fc.Arbitrary<string> => {
        const item = items.find((i) => i.item_id === itemId);
        const product = item ? sample.products[item.product_id] : undefined;
        const variants = product ? Object.values(product.variants) : [];
        const available = variants.filter((v) => v.available && v.item_id !== itemId).map((v) => v.item_id);
        const unavailable = variants.filter((v) => !v.available).map((v) => v.item_id);
        return fc.oneof(
          { weight: available.length > 0 ? 12 : 0, arbitrary: fc.constantFrom(...available, itemId) },
          { weight: unavailable.length > 0 ? 2 : 0, arbitrary: fc.constantFrom(...unavailable, itemId) },
          { weight: 1, arbitrary: fc.constant(itemId) },
          { weight: 1, arbitrary: fc.constantFrom(...variantIds) },
          { weight: 1, arbitrary: fc.constantFrom('', '__proto__', '0000000000') },
        );
      };
      const same = itemIds.length === 0 ? fc.constant<string[]>([]) : fc.tuple(...itemIds.map(one));
      return fc.oneof(
        { weight: 10, arbitrary: same },
        { weight: 1, arbitrary: same.map((a) => a.slice(1)) },
        { weight: 1, arbitrary: same.map((a) => [...a, variantIds[0]!]) },
      );
    };

    const exchange = (tool: string, status: string) =>
      orderFor(status).chain((o) =>
        itemsOf(o).chain((itemIds) =>
          fc
            .record({ new_item_ids: newItemsFor(o, itemIds), payment_method_id: paymentArb })
            .map((rest): Call => ({ tool, args: { order_id: orderId(o), item_ids: itemIds, ...rest } })),
        ),
      );
    const name = user.name;
    return fc.oneof(
      { weight: 3, arbitrary: expressionArb.map((expression): Call => ({ tool: 'calculate', args: { expression } })) },
      {
        weight: 2,
        arbitrary: fc
          .record({
            order_id: orderFor('pending').map(orderId),
            reason: fc.oneof(
              { weight: 8, arbitrary: fc.constantFrom('no longer needed', 'ordered by mistake') },
              { weight: 1, arbitrary: fc.constantFrom('No longer needed', 'other', '') },
            ),
          })
          .map((args): Call => ({ tool: 'cancel_pending_order', args })),
      },
      { weight: 6, arbitrary: exchange('exchange_delivered_order_items', 'delivered') },
      { weight: 6, arbitrary: exchange('modify_pending_order_items', 'pending') },
      {
        weight: 2,
        arbitrary: fc
          .record({
            first_name: fc.oneof(
              { weight: 5, arbitrary: caseVariant(name.first_name) },
              { weight: 1, arbitrary: text },
            ),
            last_name: fc.oneof({ weight: 5, arbitrary: caseVariant(name.last_name) }, { weight: 1, arbitrary: text }),
            zip: fc.oneof({ weight: 3, arbitrary: fc.constant(user.address.zip) }, { weight: 1, arbitrary: text }),
          })
          .map((args): Call => ({ tool: 'find_user_id_by_name_zip', args })),
      },
      {
        weight: 2,
        arbitrary: fc
          .oneof(caseVariant(user.email), text)
          .map((email): Call => ({ tool: 'find_user_id_by_email', args: { email } })),
      },
      {
        weight: 2,
        arbitrary: orderFor().map((o): Call => ({ tool: 'get_order_details', args: { order_id: orderId(o) } })),
      },
      { weight: 1, arbitrary: anyOrderId.map((order_id): Call => ({ tool: 'get_order_details', args: { order_id } })) },
      {
        weight: 2,
        arbitrary: anyProductOrItemId.map((product_id): Call => ({
          tool: 'get_product_details',
          args: { product_id },
        })),
      },
      {
        weight: 2,
        arbitrary: anyProductOrItemId.map((item_id): Call => ({ tool: 'get_item_details', args: { item_id } })),
      },
      {
        weight: 2,
        arbitrary: fc
          .oneof(fc.constant(user.user_id), anyUserId)
          .map((user_id): Call => ({ tool: 'get_user_details', args: { user_id } })),
      },
      { weight: 1, arbitrary: fc.constant<Call>({ tool: 'list_all_product_types', args: {} }) },
      {
        weight: 3,
        arbitrary: fc
          .tuple(orderFor('pending', 'pending (item modified)'), address)
          .map(([o, a]): Call => ({ tool: 'modify_pending_order_address', args: { order_id: orderId(o), ...a } })),
      },
      {
        weight: 6,
        arbitrary: fc.tuple(orderFor('pending', 'pending (item modified)'), paymentArb).map(([o, p]): Call => ({
          tool: 'modify_pending_order_payment',
          args: { order_id: orderId(o), payment_method_id: p },
        })),
      },
      {
        weight: 2,
        arbitrary: fc
          .tuple(
            fc.oneof({ weight: 3, arbitrary: fc.constant(user.user_id) }, { weight: 1, arbitrary: anyUserId }),
            address,
          )
          .map(([user_id, a]): Call => ({ tool: 'modify_user_address', args: { user_id, ...a } })),
      },
      {
        weight: 5,
        arbitrary: orderFor('delivered').chain((o) =>
          fc.tuple(itemsOf(o), paymentArb).map(([item_ids, payment_method_id]): Call => ({
            tool: 'return_delivered_order_items',
            args: { order_id: orderId(o), item_ids, payment_method_id },
          })),
        ),
      },
      {
        weight: 1,
        arbitrary: text.map((summary): Call => ({ tool: 'transfer_to_human_agents', args: { summary } })),
      },
    );
  }

  /**
   * A sequence of calls about one user and one of their orders (and, now and then, others): users with more
   * orders, and users with an almost empty gift card, more often.
   */
  const sequence: fc.Arbitrary<Call[]> = fc
    .oneof(
      ...users.map((user) => ({
        weight: (1 + user.orders.length) * (lowGiftCard(user) ? 8 : 1),
        arbitrary: fc.constant(user),
      })),
    )
    .chain((user) =>
      fc
        .option(fc.constantFrom(...orders.filter((o) => o.user_id === user.user_id), ...orders.slice(0, 1)), {
          freq: 5,
          nil: undefined,
        })
        .chain((focus) => fc.array(callFor(user, focus), { minLength: 1, maxLength: 12 })),
    );
  return { sequence };
}

/**
 * Sequences that take the deepest paths for sure, built from the sample (fast-check runs them first, then
 * the random ones): a gift card too low for the new items or the exchange, an order whose payment was changed
 * twice, an exchange of no items (the reference stores the int 0 as its price difference), several items
 * modified at once (each takes the price and options of the LAST new item, as in the reference), a refund to
 * a gift card, a return to a card that did not pay.
 */
export function exampleSequences(sample: RetailDB): Call[][] {
  const orders = Object.values(sample.orders);
  const lowestGiftCard = (u: User): GiftCard | undefined =>
    Object.values(u.payment_methods)
      .filter((p): p is GiftCard => p.source === 'gift_card')
      .sort((a, b) => a.balance - b.balance)[0];
  /** For each item, the dearest other available variant of its product. */
  const dearer = (o: Order) =>
    o.items.map((item) => {
      const variants = Object.values(sample.products[item.product_id]!.variants).filter(
        (v) => v.available && v.item_id !== item.item_id,
      );
      return variants.sort((a, b) => b.price - a.price)[0] ?? sample.products[item.product_id]!.variants[item.item_id]!;
    });
  const sequences: Call[][] = [];
  for (const status of ['pending', 'delivered'] as const) {
    const tool = status === 'pending' ? 'modify_pending_order_items' : 'exchange_delivered_order_items';
    const found = orders.find((o) => {
      const card = lowestGiftCard(sample.users[o.user_id]!);
      const difference = dearer(o).reduce((sum, v, i) => sum + v.price - o.items[i]!.price, 0);
      return o.status === status && card !== undefined && card.balance < difference;
    });
    if (found === undefined) throw new Error(`no ${status} order whose dearer items a gift card cannot pay`);
    const card = lowestGiftCard(sample.users[found.user_id]!)!;
    sequences.push([
      {
        tool,
        args: {
          order_id: found.order_id,
          item_ids: found.items.map((i) => i.item_id),
          new_item_ids: dearer(found).map((v) => v.item_id),
          payment_method_id: card.id,
        },
      },
      { tool: 'get_order_details', args: { order_id: found.order_id } },
    ]);
  }
  const pendingWithCards = orders.filter(
    (o) => o.status === 'pending' && Object.keys(sample.users[o.user_id]!.payment_methods).length >= 2,
  );
  for (const order of pendingWithCards.slice(0, 3)) {
    const methods = Object.keys(sample.users[order.user_id]!.payment_methods);
    const paid = order.payment_history[0]!.payment_method_id;
    const other = methods.find((m) => m !== paid)!;
    sequences.push([
      { tool: 'modify_pending_order_payment', args: { order_id: order.order_id, payment_method_id: other } },
      { tool: 'modify_pending_order_payment', args: { order_id: order.order_id, payment_method_id: paid } },
      { tool: 'cancel_pending_order', args: { order_id: order.order_id, reason: 'ordered by mistake' } },
    ]);
  }
  const first = orders.find((o) => o.status === 'delivered')!;
  // a delivered order whose user has a card (not a gift card) that did not pay for it
  const returnable = orders
    .filter((o) => o.status === 'delivered' && o !== first)
    .map((o) => ({
      order: o,
      card: Object.values(sample.users[o.user_id]!.payment_methods).find(
        (m) => m.source !== 'gift_card' && m.id !== o.payment_history[0]!.payment_method_id,
      ),
    }))
    .find(({ card }) => card !== undefined)!;
  const pending = orders.find((o) => o.status === 'pending')!;
  sequences.push([
    {
      tool: 'exchange_delivered_order_items',
      args: {
        order_id: first.order_id,
        item_ids: [],
        new_item_ids: [],
        payment_method_id: first.payment_history[0]!.payment_method_id,
      },
    },
    {
      tool: 'return_delivered_order_items',
      args: {
        order_id: returnable.order.order_id,
        item_ids: [returnable.order.items[0]!.item_id],
        payment_method_id: returnable.card!.id,
      },
    },
    {
      tool: 'return_delivered_order_items',
      args: {
        order_id: returnable.order.order_id,
        item_ids: [returnable.order.items[0]!.item_id, 'x'],
        payment_method_id: returnable.order.payment_history[0]!.payment_method_id,
      },
    },
    { tool: 'cancel_pending_order', args: { order_id: pending.order_id, reason: 'because' } },
  ]);
  for (const order of orders.filter((o) => o.status === 'pending' && o.items.length >= 2).slice(0, 3)) {
    const itemIds = order.items.map((i) => i.item_id);
    sequences.push([
      {
        tool: 'modify_pending_order_items',
        args: {
          order_id: order.order_id,
          item_ids: itemIds,
          new_item_ids: dearer(order).map((v) => v.item_id),
          payment_method_id: order.payment_history[0]!.payment_method_id,
        },
      },
      {
        tool: 'modify_pending_order_payment',
        args: { order_id: order.order_id, payment_method_id: order.payment_history[0]!.payment_method_id },
      },
      { tool: 'cancel_pending_order', args: { order_id: order.order_id, reason: 'no longer needed' } },
    ]);
  }
  return sequences;
}
