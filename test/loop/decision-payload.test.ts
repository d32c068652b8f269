// The decision step gets a bounded state: its input (and so each decide event in the history)
// must not grow with the number of steps a run has taken.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildDecisionPayload,
  modelPayload,
  promptChars,
  RECENT_STEPS,
} from '../../common/model-view/decision-payload';
import { defaultAllowedToolsOf } from '../../domains/index';
import { supportDomain } from '../../domains/support/index';
import type { HistoryEntry } from '../../common/types';

function historyOf(steps: number): HistoryEntry[] {
  const names = ['get_user_profile', 'get_user_billing', 'search_policy'];
  return Array.from({ length: steps }, (_, i) => {
    const name = names[i % names.length]!;
    return {
      step: i + 1,
      action: { kind: 'tool' as const, name, args: { query: `refund ${i + 1}` } },
      observation: {
        tool: name,
        ok: true,
        data: { matches: [`doc ${i + 1}`] },
        source: 'test',
        bytes: 20,
        truncated: false,
      },
    };
  });
}

const size = (steps: number) =>
  JSON.stringify(
    buildDecisionPayload('goal', '42', historyOf(steps), defaultAllowedToolsOf(supportDomain), supportDomain),
  ).length;

describe('decision payload', () => {
  it('lists each tool used once, in order of first use', () => {
    const payload = buildDecisionPayload(
      'goal',
      '42',
      historyOf(200),
      defaultAllowedToolsOf(supportDomain),
      supportDomain,
    );
    assert.deepEqual(payload.state_summary.tools_used, ['get_user_profile', 'get_user_billing', 'search_policy']);
    assert.equal(payload.state_summary.steps_completed, 200);
    assert.equal(payload.untrusted_observations.steps.length, RECENT_STEPS);
    assert.equal(payload.untrusted_observations.steps[RECENT_STEPS - 1]!.step, 200);
  });

  it('stays the same size at step 200 as at step 10 (only step numbers get longer)', () => {
    assert.ok(size(200) - size(10) < 40, `payload grew from ${size(10)} to ${size(200)} characters`);
  });

  it("counts the model's message as modelPayload renders it, to the character, without rendering it", () => {
    const payload = buildDecisionPayload(
      'goal',
      '42',
      historyOf(5),
      defaultAllowedToolsOf(supportDomain),
      supportDomain,
      undefined,
      true,
    );
    assert.equal(promptChars(payload, supportDomain), JSON.stringify(modelPayload(payload, supportDomain)).length);
    // A described tool (an MCP server's) goes as recorded, next to the named ones.
    const mcpTool = { name: 'shop.lookup', description: 'Looks up "orders" \u2014 by id', args: { type: 'object' } };
    const mixed = { ...payload, available_tools: [...payload.available_tools, mcpTool] };
    assert.equal(promptChars(mixed, supportDomain), JSON.stringify(modelPayload(mixed, supportDomain)).length);
    assert.ok(
      promptChars(mixed, supportDomain) > JSON.stringify(mixed).length,
      'the named tools are counted described',
    );
  });
});
