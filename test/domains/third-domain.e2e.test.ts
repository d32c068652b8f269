// A third domain from a folder of its own (test/fixtures/domains/library/), added the way
// docs/domains.md says, with nothing outside that folder changed: the worker is told of it by
// AGENT_DOMAINS, and a run in it goes through the real worker and the scripted model.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { registerDomainFolders } from '../../domains/backends';
import { DOMAINS } from '../../domains/index';
import { byStep, final, tool } from '../../offline-model/scripted-replies';
import { requestView } from '../../offline-model/request-view';
import { agentFixture } from '../helpers/agent-fixture';

const REPO = path.resolve(__dirname, '..', '..', '..');
/** The compiled folder the worker loads, and its source, whose files the doc's steps name. */
const COMPILED = path.resolve(__dirname, '..', 'fixtures', 'domains', 'library');
const SOURCE = path.join(REPO, 'test', 'fixtures', 'domains', 'library');
const AGENT_DOMAINS = { AGENT_DOMAINS: COMPILED };

const fixture = agentFixture({ queue: 'third-domain', workerEnv: AGENT_DOMAINS });

/** The numbered steps of docs/domains.md's walk-through, and the files under `domains/<name>/` each names. */
function docSteps(): Array<{ step: string; files: string[] }> {
  const doc = fs.readFileSync(path.join(REPO, 'docs', 'domains.md'), 'utf8');
  const walk = doc.slice(
    doc.indexOf('## Adding a domain'),
    doc.indexOf('\n## ', doc.indexOf('## Adding a domain') + 1),
  );
  // A step is its numbered line and the indented lines that continue it.
  return walk
    .split(/\n(?=\d+\. )/)
    .filter((step) => /^\d+\. /.test(step))
    .map((step) => ({ step, files: [...step.matchAll(/`domains\/<name>\/([^`]+)`/g)].map((m) => m[1]!) }));
}

describe('a third domain, from its own folder', () => {
  it("has every file docs/domains.md's steps name", () => {
    const steps = docSteps();
    assert.ok(steps.length >= 4, `the walk-through's steps: ${steps.length}`);
    const named = steps.flatMap((s) => s.files);
    assert.deepEqual([...new Set(named)].sort(), ['backend/index.ts', 'index.ts', 'services.ts', 'tools/<tool>.ts']);
    for (const file of named) {
      const found = file.includes('<tool>')
        ? fs.readdirSync(path.join(SOURCE, 'tools')).some((f) => f.endsWith('.ts'))
        : fs.existsSync(path.join(SOURCE, file));
      assert.ok(found, `the fixture has ${file}`);
    }
    assert.ok(
      steps.some((s) => s.step.includes('AGENT_DOMAINS')),
      'a step says how a folder outside the tree is registered',
    );
  });

  it('runs a conversation-free run on it through the real worker: its tool, its policy, its principal', async () => {
    // The client checks a run's input against the registry too: this process registers the folder as the worker does.
    registerDomainFolders(AGENT_DOMAINS);
    assert.equal(DOMAINS.library?.name, 'library');
    const run = await fixture.run(
      byStep({
        1: tool('find_book', { title: 'Dune' }),
        2: tool('find_book', { title: 'Neuromancer' }),
        3: final('Dune by Frank Herbert is on the shelf; Neuromancer is not in the catalogue.'),
      }),
      { domain: 'library', principal: 'm7', goal: 'Are Dune and Neuromancer on the shelf?', allow: ['find_book'] },
    );
    assert.equal(run.result.stop_reason, 'success', JSON.stringify(run.result).slice(0, 500));

    const seen = requestView(run.requests[2]!.body)!;
    assert.deepEqual(seen.principal, { member_id: 'm7' });
    assert.deepEqual(
      seen.steps.map((s) => [s.action.name, s.observation.ok, s.observation.data]),
      [
        ['find_book', true, { title: 'Dune', author: 'Frank Herbert', on_shelf: true }],
        ['find_book', false, { error: 'Book not found' }],
      ],
    );
    const system = JSON.stringify(run.requests[0]!.body);
    assert.match(system, /Answer from the catalogue only/, "the system prompt carries the domain's policy");
    assert.ok(!system.includes('issue_refund'), "no other domain's tool is offered");
  });

  it("refuses a run whose principal is not the domain's", async () => {
    registerDomainFolders(AGENT_DOMAINS);
    await assert.rejects(
      fixture.start(byStep({ 1: final('x') }), { domain: 'library', principal: '42', allow: ['find_book'] }),
      /principal: not a member id/,
    );
  });
});
