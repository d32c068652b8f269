// The runtime reads tools only through their definitions (effectful, needsApproval, principalArg,
// policy, reconcile, statesFacts), never by name: a second domain is a folder under domains/.
// Comments may name a tool as an example; code may not (no tool name in a string literal).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { DOMAINS } from '../../domains/index';
import { retailTools } from '../../domains/retail/tools/index';

const REPO = path.resolve(__dirname, '..', '..', '..');
/** Everything but domains/, tests, test doubles, the benchmark, the evaluation and dev scripts. */
const RUNTIME = [
  'common',
  'workflows',
  'activities',
  'worker',
  'runtime',
  'client',
  'cli',
  'codec-server',
  'mcp-server',
];

function sourcesIn(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourcesIn(file);
    return entry.name.endsWith('.ts') ? [file] : [];
  });
}

/** The code without its comments (line and block); strings are kept. */
function withoutComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

describe('the runtime and the domains', () => {
  it('no runtime code names a tool of a domain', () => {
    const names = [...Object.values(DOMAINS).flatMap((domain) => domain.tools), ...retailTools].map(
      (tool) => tool.name,
    );
    const literal = new RegExp(String.raw`['"\x60](?:reconcile_)?(${names.join('|')})['"\x60]`);
    const files = RUNTIME.flatMap((dir) => sourcesIn(path.join(REPO, dir)));
    assert.ok(files.length > 50, `found the runtime's sources (${files.length})`);
    const naming = files
      .map((file) => ({
        file: path.relative(REPO, file),
        hit: literal.exec(withoutComments(fs.readFileSync(file, 'utf8'))),
      }))
      .filter(({ hit }) => hit !== null)
      .map(({ file, hit }) => `${file}: ${hit![0]}`);
    assert.deepEqual(naming, []);
  });
});
