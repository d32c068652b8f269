// Lint rules that guard the architecture (docs/architecture.md) and the bugs that matter in a
// Temporal codebase: a floating promise in workflow code, a Node built-in in the sandbox, a layer
// importing the wrong way, an import cycle. Formatting is Prettier's job (.prettierrc.json).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const sandboxSafe = ['common/**/*.ts', 'workflows/**/*.ts'];
// Domain code (tools, data model, Python-compatible formatting) is pure: no Node built-ins, no runtime layer.
// Each domain's backend/ (its stores and ledgers, Node-side) is the exception, and only the worker's side
// imports it: the workflow bundles the pure part.
const domainBackends = ['domains/*/backend/**/*.ts', 'domains/backends.ts'];
const domainCode = ['domains/**/*.ts'];
// The same pure part as no-restricted-paths targets (globs from the project root).
// domains/backends.ts is the Node-side registry (it lists every backend/), so it is no pure file.
const pureDomainFiles = ['./domains/!(backends).ts', './domains/*/*.ts', './domains/*/!(backend)/**/*.ts'];
// What production code never imports: the build/server scripts, the local servers' library, the
// repository's own lint checks, the benchmark, the eval and the tests.
const notProduction = ['./scripts', './local-servers', './lint', './bench', './eval', './test'];
// Product code: what ships in the image and runs for a user (not the scripts, tests, eval, benchmark).
const productCode = [
  'common',
  'domains',
  'runtime',
  'workflows',
  'activities',
  'worker',
  'client',
  'cli',
  'codec-server',
  'mcp-server',
  'offline-model',
].map((dir) => `${dir}/**/*.ts`);
// The CLI, the codec server and the MCP server are entry points: no library layer imports them.
const entryPoints = ['./cli', './codec-server', './mcp-server'];

// Each domain folder imports no other domain: a domain is one folder, and removing one breaks no other.
const domainFolders = readdirSync(fileURLToPath(new globalThis.URL('./domains', import.meta.url)), {
  withFileTypes: true,
})
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);
const domainApart = domainFolders.map((name) => ({
  target: `./domains/${name}`,
  from: './domains',
  except: [`./${name}`],
  message: `domains/${name}/ imports common/, runtime/ (its backend) and its own folder, never another domain or the registries.`,
}));

// Everything above the pure layers (common/, then domains/): neither may import any of it.
const aboveDomains = [
  './workflows',
  './activities',
  './worker',
  './client',
  './runtime',
  ...notProduction,
  ...entryPoints,
];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'test/fixtures/**', '.temporal/**', 'eval-results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { 'import-x': importX },
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    settings: { 'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js', '.json'] })] },
    rules: {
      // node:test's test() and describe() return promises the runner awaits.
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            {
              from: 'package',
              package: 'node:test',
              name: ['test', 'describe', 'it', 'suite', 'before', 'after', 'beforeEach', 'afterEach'],
            },
          ],
        },
      ],
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'separate-type-imports' }],
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-self-import': 'error',
      // The layers (docs/architecture.md): common/ (sandbox-safe, imports nothing of ours), domains/
      // (pure), runtime/ (Node-side shared), workflows/ (the sandbox), activities/ and worker/ (never
      // a client), client/ (the run API), cli/ (the `agent` command), codec-server/. Production code
      // never imports the local servers' library, the benchmark, the eval or the tests; the eval and
      // the benchmark share local-servers/ and offline-model/ with the tests, never test/.
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            ...domainApart,
            {
              target: './common',
              from: ['./domains', ...aboveDomains],
              message: 'common/ is the shared base layer: it imports nothing else of ours.',
            },
            {
              target: pureDomainFiles,
              from: aboveDomains,
              message: 'domains/ is pure domain code: it may import common/ and its own folder only.',
            },
            {
              // A domain's stores and ledgers: Node-side, on the shared runtime/ (env, the PostgreSQL pool).
              target: ['./domains/*/backend/**/*.ts', './domains/backends.ts'],
              from: aboveDomains.filter((layer) => layer !== './runtime'),
              message: "A domain's backend/ may import common/, runtime/ and its own domain only.",
            },
            {
              // The workflow bundle, the shared base and the domains' pure parts never pull a backend in.
              target: ['./workflows/**/*.ts', './common/**/*.ts', ...pureDomainFiles],
              from: ['./domains/*/backend/**', './domains/@(backends).ts'],
              message:
                "A domain's backend/ is Node-side: only the worker's side (activities, the MCP server, scripts) imports it.",
            },
            {
              target: './runtime',
              from: ['./workflows', './activities', './worker', './client', ...notProduction, ...entryPoints],
              message: 'runtime/ may import common/ only.',
            },
            {
              target: './workflows',
              from: ['./activities', './worker', './client', './runtime', ...notProduction, ...entryPoints],
              message: 'Workflow code runs in the sandbox: import common/ (and workflows/) only.',
            },
            {
              target: './activities',
              from: ['./workflows', './worker', './client', ...notProduction, ...entryPoints],
              message: 'Activities import common/ and runtime/, never a client or workflow code.',
            },
            {
              target: './worker',
              from: ['./client', ...notProduction, ...entryPoints],
              message: 'The worker must not depend on a client.',
            },
            {
              // The offline model (OPENAI_BASE_URL=offline) is product code the worker serves itself.
              target: './offline-model',
              from: ['./workflows', './activities', './worker', './client', ...notProduction, ...entryPoints],
              message: 'offline-model/ is a scripted Chat Completions server: common/ and domains/ only.',
            },
            {
              target: './client',
              from: ['./activities', './worker', ...notProduction, ...entryPoints],
              message: "client/ is the run API: common/, runtime/ and the workflow's types, never the CLI.",
            },
            {
              target: './cli',
              from: ['./activities', './worker', './codec-server', ...notProduction],
              message: 'The CLI is built on client/: never the worker, the activities or test code.',
            },
            {
              target: './codec-server',
              from: ['./workflows', './activities', './worker', './client', './cli', ...notProduction],
              message: 'The codec server needs runtime/ (the codec) only.',
            },
            {
              target: './mcp-server',
              from: ['./worker', './client', './cli', './codec-server', ...notProduction],
              message:
                "The MCP server serves a domain's tools: domains/, activities/' services and the pure policy gate, never a client.",
            },
            {
              target: './scripts',
              from: ['./test', './eval', './bench'],
              message:
                'scripts/ (servers, build steps, the demo, the test runner) never import the tests, the eval or the benchmark.',
            },
            {
              target: ['./eval', './bench'],
              from: ['./test'],
              message:
                'The eval and the benchmark share local-servers/ and offline-model/ with the tests, never test/.',
            },
            {
              target: './lint',
              from: ['./scripts', './test', './eval', './bench', './local-servers'],
              message:
                'lint/ holds the checks `npm run lint` runs (scripts/ are their entries): it imports none of them.',
            },
            {
              target: './local-servers',
              from: ['./scripts', './test', './eval', './bench'],
              message:
                'local-servers/ (dev server, PostgreSQL, workers) is the library the scripts, tests, eval and benchmark share: it imports none of them.',
            },
          ],
        },
      ],
    },
  },
  {
    files: sandboxSafe,
    rules: {
      // The workflow sandbox has no Node built-ins; common/ is bundled into workflow code too.
      'import-x/no-nodejs-modules': 'error',
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@temporalio/activity', '@temporalio/worker', '@temporalio/client', 'openai', 'better-sqlite3'],
              message: 'Not in sandboxed code.',
            },
          ],
        },
      ],
    },
  },
  {
    files: domainCode,
    ignores: domainBackends,
    rules: {
      'import-x/no-nodejs-modules': 'error',
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@temporalio/*', 'openai', 'better-sqlite3'],
              message: 'Domain code is pure: the runtime wraps it.',
            },
          ],
        },
      ],
    },
  },
  {
    // A function that does not fit on a screen hides its steps: name them. Workflow code is held
    // tighter because every line there is replayed history.
    files: productCode,
    rules: {
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true, IIFEs: true }],
    },
  },
  {
    // The bench and the eval are read and changed as often as the product: the same limit.
    files: ['bench/**/*.ts', 'eval/**/*.ts'],
    rules: {
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true, IIFEs: true }],
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true, IIFEs: true }],
    },
  },
  {
    files: [
      'test/**/*.ts',
      'scripts/**/*.ts',
      'lint/**/*.ts',
      'eval/**/*.ts',
      'bench/**/*.ts',
      'local-servers/**/*.ts',
    ],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
);
