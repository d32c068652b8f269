// Every repository file a comment or a doc names must exist: a mention of a moved or deleted file
// sends the reader to nothing. A mention is a token with a folder and a file extension, such as
// `workflows/agent/agent.ts`, `worker/metrics.ts:2` or `../scripts/path-mentions.ts`; it is
// resolved against the mentioning file's folder, then against the repository root, and
// `dist/<dir>/<name>.js` stands for its source `<dir>/<name>.ts`. URLs, package paths
// (`@scope/pkg/...`, `node_modules/...`), absolute and home paths, globs and placeholders (`*`,
// `<name>`, `{a,b}`, `$VAR`) are not mentions.
import { existsSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export interface StaleMention {
  /** The mentioning file, relative to the root. */
  file: string;
  line: number;
  /** The path as written. */
  mention: string;
}

/**
 * Paths a comment or doc names that are not the repository's: files the user creates, that a build
 * or a run writes, or that live in another project. A path ending in / allows what is under it.
 */
export const ALLOWED: ReadonlyArray<{ path: string; reason: string }> = [
  { path: 'eval-results/', reason: '`npm run eval` writes its reports there' },
  { path: 'bench-results/', reason: '`npm run bench` writes its reports there' },
  { path: 'old/report.json', reason: 'an example: a report the user kept from an earlier eval' },
  { path: 'other/dist/worker/main.js', reason: "an example --entry: another checkout's build" },
  { path: './secrets/codec-keys.json', reason: 'an example: the key file the user creates' },
  { path: 'Support/temporalio/temporal.toml', reason: "the tail of macOS's ~/Library/Application Support/..." },
  { path: 'src/tau2/domains/retail/tools.py', reason: "τ²-bench's own source, which domains/retail/ ports" },
  { path: 'config/docker.yaml', reason: "the Temporal UI server module's own template" },
];

const EXTENSIONS = ['ts', 'mts', 'mjs', 'cjs', 'js', 'json', 'md', 'yml', 'yaml', 'sh', 'py', 'sql', 'toml', 'html'];
// A path token: optional ./ or ../ steps, at least one folder, a file name with a known extension,
// an optional :line. Not inside a longer token (an absolute path, a package, a URL, a home path).
const MENTION = new RegExp(
  String.raw`(?<![\w@/.~$%*{}<>-])((?:\.{1,2}/)*(?:[\w-][\w.-]*/)+[\w.-]*[\w-]\.(?:${EXTENSIONS.join('|')}))(?::\d+(?:-\d+)?)?(?![\w/*{}<>$-])`,
  'g',
);
const URL = /\b[a-z][\w+.-]*:\/\/[^\s)>\]'"`]*/g;

/** The mentions in `file` (relative to `root`) that name no file of the repository. */
export function staleMentions(root: string, file: string, text: string): StaleMention[] {
  const stale: StaleMention[] = [];
  for (const { offset, text: span } of mentionSpans(file, text)) {
    for (const m of span.replace(URL, (url) => ' '.repeat(url.length)).matchAll(MENTION)) {
      const mention = m[1]!;
      if (mention.split('/').includes('node_modules') || resolves(root, file, mention)) continue;
      stale.push({ file, line: lineAt(text, offset + m.index), mention });
    }
  }
  return stale;
}

/** The parts of a file that may name files: a doc's whole text, a source file's comments. */
function mentionSpans(file: string, text: string): Array<{ offset: number; text: string }> {
  if (file.endsWith('.md')) return [{ offset: 0, text }];
  return commentsOf(file, text).map(({ pos, end }) => ({ offset: pos, text: text.slice(pos, end) }));
}

/** Every comment of a TypeScript or JavaScript file, once, found by the compiler's own scanner. */
function commentsOf(file: string, text: string): ts.CommentRange[] {
  const kind = file.endsWith('.ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, kind);
  const byPos = new Map<number, ts.CommentRange>();
  const visit = (node: ts.Node) => {
    for (const range of [
      ...(ts.getLeadingCommentRanges(text, node.getFullStart()) ?? []),
      ...(ts.getTrailingCommentRanges(text, node.getEnd()) ?? []),
    ])
      byPos.set(range.pos, range);
    for (const child of node.getChildren(source)) visit(child);
  };
  visit(source);
  return [...byPos.values()].sort((a, b) => a.pos - b.pos);
}

function resolves(root: string, file: string, mention: string): boolean {
  const allowed = ALLOWED.some((a) => (a.path.endsWith('/') ? mention.startsWith(a.path) : mention === a.path));
  if (allowed) return true;
  const candidates = [path.join(root, path.dirname(file), mention)];
  if (!mention.startsWith('.')) candidates.push(path.join(root, mention));
  return candidates.flatMap(withSources).some((candidate) => existsSync(candidate));
}

/** A build output stands for its source: `dist/<dir>/<name>.js` and `<dir>/<name>.js` for `<dir>/<name>.ts`. */
function withSources(candidate: string): string[] {
  if (!candidate.endsWith('.js')) return [candidate];
  const source = candidate.replace(/\.js$/, '.ts');
  const parts = source.split(path.sep);
  const at = parts.lastIndexOf('dist');
  return at < 0
    ? [candidate, source]
    : [candidate, source, [...parts.slice(0, at), ...parts.slice(at + 1)].join(path.sep)];
}

function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
}
