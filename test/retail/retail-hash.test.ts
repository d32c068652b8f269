// get_db_hash in TypeScript: sha256 of json.dumps(db.model_dump(), sort_keys=True) written byte for byte as
// Python writes it. The untouched database hashes as the reference computes it, and the pieces of Python's
// formatting (float repr, ensure_ascii escapes, key order, ints in float fields) are pinned here.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { parseRetailDb, snapshot } from '../../domains/retail/db';
import { dbJson, getDbHash } from '../../domains/retail/hash';
import { loadRetailDb } from '../../domains/retail/initial-db';
import { floatRepr, pyRound } from '../../domains/retail/python/float';
import { PythonInt } from '../../domains/retail/python/int';
import { comparePyStr, pyJsonDumps } from '../../domains/retail/python/json';
import { ReferenceTools, tau2RetailDir } from '../helpers/tau2-reference';

/** The reference's get_db_hash() of db.json (tau2-bench a2c02472), as tau2 computes it. */
const INITIAL_HASH = 'b25c9cb211f5efcaee5dd646054a73c4a9f43f4f5acc32c10713cd9f9ac20e9c';

describe('retail get_db_hash', () => {
  let reference: ReferenceTools;
  before(() => {
    reference = ReferenceTools.start();
  });
  after(async () => {
    await reference.close();
  });

  it('of the untouched database is the one the reference computes', async () => {
    const py = await reference.request<{ reference: string }>({ op: 'hash' });
    assert.equal(py.reference, INITIAL_HASH);
    assert.equal(getDbHash(loadRetailDb()), py.reference);
  });

  it('is the same for the stored copy and for the shared db.json', () => {
    const shared = JSON.parse(fs.readFileSync(path.join(tau2RetailDir(), 'db.json'), 'utf8')) as unknown;
    assert.equal(getDbHash(parseRetailDb(shared)), INITIAL_HASH);
  });

  it('changes with any value, and not with the order of keys', () => {
    const db = loadRetailDb();
    const reordered = snapshot(db);
    const order = Object.values(reordered.orders)[0]!;
    const { order_id, ...rest } = order;
    reordered.orders[order_id] = { ...rest, order_id } as typeof order;
    assert.equal(getDbHash(reordered), INITIAL_HASH);
    const gift = Object.values(db.users)
      .flatMap((u) => Object.values(u.payment_methods))
      .find((p) => p.source === 'gift_card')!;
    if (gift.source === 'gift_card') gift.balance += 0.01;
    assert.notEqual(getDbHash(db), INITIAL_HASH);
  });

  it('writes the model_dump: every field, absent ones as null, floats as floats', () => {
    const db = loadRetailDb();
    const order = Object.values(db.orders)[0]!;
    assert.deepEqual(Object.keys(order), [
      'order_id',
      'user_id',
      'address',
      'items',
      'status',
      'fulfillments',
      'payment_history',
      'cancel_reason',
      'exchange_items',
      'exchange_new_items',
      'exchange_payment_method_id',
      'exchange_price_difference',
      'return_items',
      'return_payment_method_id',
    ]);
    assert.match(dbJson(db), /^\{"orders": \{"#W\d{7}": \{"address": \{"address1": /);
    assert.match(dbJson(db), /"exchange_price_difference": null/);
    assert.match(dbJson(db), /"balance": 0\.0[,}]/);
  });

  it('keeps variant ids unique across products (get_item_details does not depend on dict order)', () => {
    const ids = Object.values(loadRetailDb().products).flatMap((p) => Object.keys(p.variants));
    assert.equal(new Set(ids).size, ids.length);
  });
});

describe("Python's formatting", () => {
  it('float repr', () => {
    const cases: [number, string][] = [
      [100, '100.0'],
      [54.04, '54.04'],
      [0.1 + 0.2, '0.30000000000000004'],
      [1e-5, '1e-05'],
      [1e-4, '0.0001'],
      [1.5e-7, '1.5e-07'],
      [1e16, '1e+16'],
      [1e15, '1000000000000000.0'],
      [1.2345678901234568e17, '1.2345678901234568e+17'],
      [-0, '-0.0'],
      [5e-324, '5e-324'],
      [1.7976931348623157e308, '1.7976931348623157e+308'],
      [Infinity, 'inf'],
      [NaN, 'nan'],
    ];
    for (const [x, repr] of cases) assert.equal(floatRepr(x), repr, `repr(${x})`);
  });

  it('round(x, 2): on the exact binary value, ties to even, sign kept', () => {
    const cases: [number, number][] = [
      [2.675, 2.67], // 2.67499999999999982236431605997495353221893310546875
      [0.125, 0.12],
      [0.375, 0.38],
      [1.005, 1.0],
      [-0.001, -0],
      [123.456, 123.46],
      [1e20, 1e20],
    ];
    for (const [x, rounded] of cases) assert.ok(Object.is(pyRound(x, 2), rounded), `round(${x}, 2)`);
  });

  it('json.dumps: separators, ensure_ascii escapes, sorted keys by code point, ints in float fields', () => {
    assert.equal(pyJsonDumps({ b: [1, 2.5], a: null }, { sortKeys: true }), '{"a": null, "b": [1.0, 2.5]}');
    assert.equal(pyJsonDumps({ b: 1, a: 2 }), '{"b": 1.0, "a": 2.0}');
    assert.equal(
      pyJsonDumps('é\u007f\n"\\/\ud83d\ude00\ud800\u0001'),
      '"\\u00e9\\u007f\\n\\"\\\\/\\ud83d\\ude00\\ud800\\u0001"',
    );
    assert.equal(pyJsonDumps([new PythonInt(0), 0, -0, 10n]), '[0, 0.0, -0.0, 10]');
    assert.equal(pyJsonDumps([NaN, Infinity, -Infinity]), '[NaN, Infinity, -Infinity]');
    assert.equal(JSON.stringify({ x: new PythonInt(0) }), '{"x":0}');
    // U+FFFF sorts before U+10000 in Python (code points), after it in UTF-16 code units.
    assert.deepEqual(['\u{10000}', '\uffff', 'a'].sort(comparePyStr), ['a', '\uffff', '\u{10000}']);
  });
});
