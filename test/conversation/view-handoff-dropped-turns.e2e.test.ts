// Adversary: the view handoff (docs/model-protocol.md, "through a sink") in a long conversation.
// Promised: a decision reads the same view from the worker that scheduled it (in memory) as by the
// model_view Query (a retry, another worker). A conversation keeps its last 200 turns
// (CONVERSATION_LIMITS.kept_turns): a customer message that arrives while a decision is in flight
// drops the oldest kept turn. The handed view was taken before it; a Query after it is not the same.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { message } from '../../offline-model/scripted-replies';
import type { Reply } from '../../offline-model/scripted-llm-server';
import { runState } from '../../client/agent-client';
import { sayToRun } from '../../client/conversation';
import { CONVERSATION_LIMITS } from '../../common/conversation/conversation';
import { agentFixture } from '../helpers/agent-fixture';
import { eventually } from '../helpers/harness';

const fixture = agentFixture({ queue: 'adv-handoff-turns', worker: false });
const ROUNDS = CONVERSATION_LIMITS.kept_turns / 2; // an agent turn and a customer turn each

describe('a long conversation: a message arrives while a decision is in flight', () => {
  it('the decision’s retry (Query) shows the model what its first attempt (handoff) did', async () => {
    const first = fixture.startWorker();
    await first.ready;
    const decisive = ROUNDS + 1;
    let decisiveAsked = 0;
    const { id, handle } = await fixture.start(
      (req): Reply => {
        if (req.step !== decisive) return message(`agent turn ${req.step}`);
        decisiveAsked++;
        return decisiveAsked === 1 ? { hang: true } : message('after the retry');
      },
      { conversation: {}, budget: { max_steps: decisive + 2, max_tool_calls: 1, max_seconds: 900 } },
    );
    for (let round = 1; round <= ROUNDS; round++) {
      await eventually(
        `round ${round}: the agent's message`,
        async () => {
          const state = await runState(handle);
          return state.phase === 'awaiting_customer' && state.conversation?.total === 2 * round - 1 ? true : undefined;
        },
        30_000,
      );
      await sayToRun(fixture.client, id, { text: `customer turn ${round}` });
    }
    await eventually(
      'the decisive decision to reach the model',
      () => (decisiveAsked === 1 ? true : undefined),
      30_000,
    );
    // While it is in flight: one more customer message, turn 201: the run drops turn 1.
    await sayToRun(fixture.client, id, { text: 'one more while you think' });
    await first.kill();
    const second = fixture.startWorker();
    await second.ready;
    await eventually(
      'the decision to be retried on the fresh worker',
      () => (decisiveAsked === 2 ? true : undefined),
      60_000,
    );
    const asked = fixture.llm.requests(id).filter((r) => r.step === decisive);
    assert.equal(asked.length, 2);
    const [handed, queried] = [asked[0]!.body.messages as unknown[], asked[1]!.body.messages as unknown[]];
    const at = handed.findIndex((m, i) => JSON.stringify(m) !== JSON.stringify(queried[i]));
    assert.equal(
      at,
      -1,
      `the handoff and the Query showed different views (${handed.length} and ${queried.length} messages), from message ${at}: ` +
        `${JSON.stringify(handed[at])} then ${JSON.stringify(queried[at])}`,
    );
    assert.equal(queried.length, handed.length);
  });
});
