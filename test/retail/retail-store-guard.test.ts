// The retail store's guard: a run pinned to one kind of store (its first retail result's) is
// refused by a worker on another kind, and the kind survives continue-as-new.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { storeMismatch } from '../../domains/retail/store-guard';
import type { RetailRecords } from '../../domains/retail/services';
import { carryState, loopStateOf } from '../../workflows/agent/carry';
import { freshRunState } from '../helpers/run-state';

const on = (kind: RetailRecords['kind']) => ({ kind }) as RetailRecords;

describe('the retail store guard', () => {
  it('lets a call through with no kind yet or the same kind, and refuses another kind naming the variable', () => {
    assert.equal(storeMismatch('get_order_details', undefined, on('sqlite')), undefined);
    assert.equal(storeMismatch('get_order_details', 'postgresql', on('postgresql')), undefined);
    const refusal = storeMismatch('get_order_details', 'postgresql', on('sqlite'));
    assert.match(refusal ?? '', /postgresql retail store, this worker's is sqlite.*AGENT_RETAIL_DATABASE_URL/);
  });

  it("carries the run's store kind to the next run of the chain", () => {
    const carried = carryState(freshRunState({ store: 'postgresql' }));
    assert.equal(loopStateOf(carried).store, 'postgresql');
    assert.equal(loopStateOf(undefined).store, undefined);
  });
});
