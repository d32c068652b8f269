// The lint check that every file a comment or a doc names exists (lint/path-mentions.ts), on a
// temporary folder: stale mentions are found with their line, existing ones are accepted, and what
// is not a mention of a repository file (URLs, packages, globs, strings in code) is left alone.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import * as path from 'node:path';
import { staleMentions } from '../../lint/path-mentions';

const root = mkdtempSync(path.join(os.tmpdir(), 'path-mentions-'));
after(() => rmSync(root, { recursive: true, force: true }));
mkdirSync(path.join(root, 'src', 'feature'), { recursive: true });
writeFileSync(path.join(root, 'src', 'feature', 'here.ts'), 'export const here = 1;\n');

const mentionsOf = (file: string, text: string) =>
  staleMentions(root, file, text).map((s) => `${s.file}:${s.line}: ${s.mention}`);

describe('path mentions', () => {
  it('finds a stale path in a doc, with its line, and accepts an existing one', () => {
    const doc = ['# Doc', 'See `src/feature/here.ts` and `src/feature/here.ts:1`.', 'Moved: `src/gone.ts:12`.'].join(
      '\n',
    );
    assert.deepEqual(mentionsOf('docs/doc.md', doc), ['docs/doc.md:3: src/gone.ts']);
  });

  it("resolves a relative path against the mentioning file's folder, and a build output to its source", () => {
    const doc = '[here](../src/feature/here.ts), [gone](../src/feature/gone.ts), `node dist/src/feature/here.js`';
    assert.deepEqual(mentionsOf('docs/doc.md', doc), ['docs/doc.md:1: ../src/feature/gone.ts']);
    assert.deepEqual(mentionsOf('src/index.md', 'feature/here.ts and ./feature/here.ts'), []);
    assert.deepEqual(mentionsOf('src/index.md', '`node dist/src/feature/gone.js`'), [
      'src/index.md:1: dist/src/feature/gone.js',
    ]);
  });

  it('reads the comments of source files, not their code', () => {
    const code = [
      '// Reads src/feature/here.ts.',
      "const where = 'src/not-a-mention.ts';",
      '/**',
      ' * Moved: src/feature/old.ts',
      ' */',
      'export function f() {',
      '  return where; // see src/other/gone.mjs',
      '}',
    ].join('\n');
    assert.deepEqual(mentionsOf('src/code.ts', code), [
      'src/code.ts:4: src/feature/old.ts',
      'src/code.ts:7: src/other/gone.mjs',
    ]);
  });

  it('leaves alone what does not name a repository file', () => {
    const doc = [
      'https://github.com/owner/repo/blob/main/src/gone.ts',
      '`@temporalio/common/lib/proto-utils.js`, `node_modules/x/y.js`',
      '`src/**/*.ts`, `src/<name>.ts`, `/usr/lib/x/y.json`, `~/.config/x/y.toml`, `$HOME/x/y.json`',
      '`eval-results/report.json` (the eval writes it)',
    ].join('\n');
    assert.deepEqual(mentionsOf('docs/doc.md', doc), []);
  });
});
