// The first conversation of docs/getting-started.md, offline: a worker with OPENAI_BASE_URL=offline (no key, no model
// service) plays the retail chat. A person at a terminal (a pseudo-terminal, util-linux `script`)
// sees the greeting and the `you: ` prompt, types its lines, is asked the consent question
// and sees the conversation end after the yes; the order is cancelled in the store, once. Asked
// anything else, the model says in one line what it can play and the chat goes on.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { countAppliedWrites, readRetailDb } from '../../domains/retail/backend/open';
import { OFFLINE_GREETING, OFFLINE_SCENES } from '../../offline-model/offline-chat-model';
import type { WorkerProcess } from '../../local-servers/worker-process';
import type { TemporalEnv } from '../../runtime/temporal-env';
import { agentFixture } from '../helpers/agent-fixture';
import { chatSession } from '../helpers/chat';
import { uniqueId } from '../helpers/harness';

const RETAIL_DB = path.join(mkdtempSync(path.join(os.tmpdir(), 'offline-chat-')), 'retail.sqlite');
// Its lines (τ²-bench's retail data: ivan_santos_6635's pending order).
const ORDER = '#W8770097';
const REQUEST = `Please cancel order ${ORDER}, I no longer need it. My email is ivan.santos3158@example.com`;
const README_ARGS = ['--domain', 'retail', '--allow', 'all', '--max-steps', '40', '--max-tool-calls', '30'];

let on: TemporalEnv;
let worker: WorkerProcess;
const fixture = agentFixture({
  queue: 'offline-chat',
  worker: false,
  setup: async () => {
    on = fixture.queue('offline');
    worker = fixture.startWorker({ OPENAI_BASE_URL: 'offline', OPENAI_API_KEY: '', AGENT_RETAIL_DB: RETAIL_DB }, on);
    await worker.ready;
  },
});

/** The screen as a person reads it: carriage returns dropped, one entry per line. */
const screen = (output: string) => output.replace(/\r/g, '').split('\n');
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('the first conversation, offline, at a terminal', () => {
  it("docs/getting-started.md's retail chat: greeting, you:, the consent question, the yes, the end; the order cancelled once", async () => {
    const id = uniqueId('offline-chat');
    const session = chatSession(on, ['--id', id, ...README_ARGS], { terminal: true });
    // Nothing is answered before anything is typed: the greeting, then the prompt.
    await session.shows(new RegExp(`agent: ${escape(OFFLINE_GREETING)}\\r?\\nyou: `));
    assert.equal(fixture.llm.requests(id).length, 0, "the test's own scripted server is never asked");
    session.type(REQUEST);
    await session.shows(/agent: To go ahead I need your confirmation of this exact action: cancel pending order/);
    await session.shows(/Reply "yes" to confirm; anything else cancels it\.\r?\nyou: /);
    assert.equal((await readRetailDb(RETAIL_DB, id)).orders[ORDER]!.status, 'pending', 'nothing before the yes');
    session.type('yes');
    await session.shows(/conversation ended: success/);
    const out = await session.done;
    assert.equal(out.code, 0, out.output);
    const lines = screen(out.output).filter((l) => /^(agent|you):|^conversation ended/.test(l));
    assert.deepEqual(lines, [
      `agent: ${OFFLINE_GREETING}`,
      `you: ${REQUEST}`,
      lines[2], // the consent question, matched below
      'you: yes',
      `agent: Order ${ORDER} is cancelled; the refund goes back to your original payment method in 5-7 business days.`,
      'conversation ended: success (the model gave a final answer)',
    ]);
    assert.equal(
      lines[2],
      'agent: To go ahead I need your confirmation of this exact action: cancel pending order ' +
        '{"order_id":"#W8770097","reason":"no longer needed"}. Reply "yes" to confirm; anything else cancels it.',
    );
    assert.equal((await readRetailDb(RETAIL_DB, id)).orders[ORDER]!.status, 'cancelled');
    assert.equal(await countAppliedWrites(RETAIL_DB, id), 1);
  });

  it('asked anything else, it says in one line what it can play, and the conversation goes on', async () => {
    const id = uniqueId('offline-other');
    const session = chatSession(on, ['--id', id, ...README_ARGS], { terminal: true });
    await session.shows(/you: $/);
    session.type('What is the weather like in Paris?');
    await session.shows(new RegExp(`agent: ${escape(OFFLINE_SCENES)}\\r?\\nyou: `));
    session.type('/end');
    const out = await session.done;
    assert.equal(out.code, 0, out.output);
    assert.doesNotMatch(out.output, /cannot verify a refund/);
  });
});
