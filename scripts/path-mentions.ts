// `npm run lint` part three: every repository file a comment or a doc names exists
// (lint/path-mentions.ts says what counts as a mention). Run from the repository root.
// CHANGELOG.md is exempt: it names files as they were then.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { staleMentions } from '../lint/path-mentions';

const files = execFileSync('git', ['ls-files', '*.ts', '*.mjs', '*.md'], { encoding: 'utf8' })
  .split('\n')
  .filter((f) => f && !f.startsWith('test/fixtures/') && f !== 'CHANGELOG.md');
const stale = files.flatMap((file) => staleMentions('.', file, readFileSync(file, 'utf8')));
if (stale.length > 0) {
  console.error(`file paths named in comments or docs that do not exist:`);
  for (const s of stale) console.error(`${s.file}:${s.line}: ${s.mention}`);
  process.exit(1);
}
console.log(`every file path named in the comments and docs of ${files.length} files exists`);
