// Which `say` Update ids a conversation chain carries across continue-as-new (rememberedAfter): the
// last 20, and the first message's for the whole chain, whatever came in between.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { CONVERSATION_LIMITS, firstMessageUpdateId, rememberedAfter } from '../../common/conversation/conversation';

const WORKFLOW_ID = 'chat-1';

describe('the say Updates a chain remembers', () => {
  it('the last 20 and the first message, never more, in the order applied', () => {
    fc.assert(
      fc.property(fc.boolean(), fc.array(fc.uuid(), { maxLength: 80 }), (startedWithFirst, ids) => {
        const all = [...(startedWithFirst ? [firstMessageUpdateId(WORKFLOW_ID)] : []), ...ids];
        let kept: Array<{ id: string; n: number }> = [];
        all.forEach((id, n) => (kept = rememberedAfter(kept, { id, n }, WORKFLOW_ID)));
        const limit = CONVERSATION_LIMITS.remembered_updates;
        assert.ok(kept.length <= limit + 1, `${kept.length} kept`);
        for (const id of all.slice(-limit))
          assert.ok(
            kept.some((k) => k.id === id),
            `a recent id is kept`,
          );
        if (startedWithFirst) assert.equal(kept[0]!.id, firstMessageUpdateId(WORKFLOW_ID), 'the first message is kept');
        assert.deepEqual(
          kept.map((k) => k.n),
          [...kept.map((k) => k.n)].sort((a, b) => a - b),
        );
      }),
    );
  });
});
