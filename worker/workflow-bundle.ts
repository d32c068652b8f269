// Where a worker's workflow code comes from. Bundling it with webpack at every start costs seconds
// (a 4.4 MB bundle), so `npm run build` bundles it once (scripts/bundle-workflows.ts) and a worker
// only reads the file. A bundle fixes the failure converter compiled into it, so there are two: one
// for workers without a codec key, one that encodes failure messages (runtime/data-converter.ts).
// A bundle that is missing or made from other compiled code than there is now (`tsc` run alone, a
// file edited by hand; worker/bundle-inputs.ts compares contents) is not used: the worker bundles
// from source as before, and says so in one line.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { DataConverter } from '@temporalio/common';
import type { WorkerOptions } from '@temporalio/worker';
import { FAILURE_CONVERTER_PATH } from '../runtime/data-converter';
import { currentInputs, inputsDifference, recordedInputs } from './bundle-inputs';
import type { BundleInputs } from './bundle-inputs';

const DIST = path.resolve(__dirname, '..');

/** The workflow code's entry (every workflow type the task queue serves). */
export const WORKFLOWS_PATH = require.resolve('../workflows');

/**
 * The workflow interceptor modules every bundle carries: OpenTelemetry tracing, active only in runs
 * started with a trace context (workflows/tracing/otel-interceptors.ts).
 */
export const WORKFLOW_INTERCEPTOR_MODULES: readonly string[] = [
  require.resolve('../workflows/tracing/otel-interceptors'),
];

/**
 * What the workflow thread evaluates once, at its start, and shares (frozen) between runs instead of
 * evaluating it again for each run it starts or replays: workflows/preloaded.ts, which names the
 * libraries (zod was a quarter of that per-run evaluation: docs/benchmark.md, the per-step cost).
 * Schemas built with zod stay per run: zod fills a schema's methods in on first use, which a frozen
 * schema would refuse.
 */
export const PRELOADED_MODULES: readonly string[] = [require.resolve('../workflows/preloaded')];

/** The compiled code a bundle is made of: workflow code may import only these folders (ESLint zones). */
export const BUNDLED_DIRS: readonly string[] = ['workflows', 'common', 'domains'].map((dir) => path.join(DIST, dir));

/**
 * webpack's source map for the prebuilt bundles: inline (the worker reads it from the bundle to map
 * workflow stack traces to the TypeScript lines) but without the sources' text, which doubled the size
 * of a bundle every worker reads at start.
 */
export const PREBUILT_DEVTOOL = 'inline-nosources-source-map';

export interface PrebuiltBundle {
  file: string;
  failureConverterPath?: string;
}

export const PREBUILT_BUNDLES: readonly PrebuiltBundle[] = [
  { file: path.join(DIST, 'workflow-bundle.js') },
  { file: path.join(DIST, 'workflow-bundle.encoded-failures.js'), failureConverterPath: FAILURE_CONVERTER_PATH },
];

export interface WorkflowCode {
  options: Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath' | 'bundlerOptions'>;
  /** For code bundled at start: the interceptor modules to bundle with it (a prebuilt bundle has them). */
  workflowModules?: string[];
  /** true when a prebuilt bundle is used */
  prebuilt: boolean;
  /** One line for the worker's log: which code it runs, or why it bundles at start. */
  description: string;
}

/** The prebuilt bundle made for this data converter's converter paths, if there is one. */
export function bundleFor(dataConverter: DataConverter | undefined): PrebuiltBundle | undefined {
  if (dataConverter?.payloadConverterPath) return undefined;
  return PREBUILT_BUNDLES.find((b) => b.failureConverterPath === dataConverter?.failureConverterPath);
}

/** What, besides the compiled files, a bundle depends on: the SDK that bundled it and its options. */
export function bundleOptions(bundle: PrebuiltBundle): Record<string, string> {
  const sdk = JSON.parse(fs.readFileSync(require.resolve('@temporalio/worker/package.json'), 'utf8')) as {
    version: string;
  };
  return {
    sdk: sdk.version,
    devtool: PREBUILT_DEVTOOL,
    failureConverter: bundle.failureConverterPath ? path.relative(DIST, bundle.failureConverterPath) : 'default',
    interceptors: WORKFLOW_INTERCEPTOR_MODULES.map((m) => path.relative(DIST, m)).join(','),
    preload: PRELOADED_MODULES.map((m) => path.relative(DIST, m)).join(','),
  };
}

/** The inputs `bundle` would be made of now (files named relative to the bundle's folder). */
export function inputsNow(bundle: PrebuiltBundle, dirs: readonly string[] = BUNDLED_DIRS): BundleInputs {
  return currentInputs(dirs, path.dirname(bundle.file), bundleOptions(bundle));
}

/** Why `bundle` cannot stand for the compiled code in `dirs` (missing, or made from other inputs); undefined if it can. */
export function bundleStaleness(bundle: PrebuiltBundle, dirs: readonly string[] = BUNDLED_DIRS): string | undefined {
  if (!fs.existsSync(bundle.file)) return 'is missing';
  const recorded = recordedInputs(bundle.file);
  if (!recorded) return 'has no record of its inputs';
  return inputsDifference(recorded, inputsNow(bundle, dirs));
}

/**
 * The workflow code's entry that first registers the domains of these folders (AGENT_DOMAINS: each
 * `index.js` exports `domain`), so the workflow knows them as the activities do. A file beside the
 * prebuilt bundles (the bundler resolves the SDK from there), named by its content.
 */
export function entryWithDomains(folders: readonly string[]): string {
  const registry = require.resolve('../domains/index');
  const code = [
    `const { registerDomain } = require(${JSON.stringify(registry)});`,
    ...folders.map((folder) => `registerDomain(require(${JSON.stringify(path.join(folder, 'index'))}).domain);`),
    `module.exports = require(${JSON.stringify(WORKFLOWS_PATH)});`,
    '',
  ].join('\n');
  const file = path.join(DIST, `workflow-entry-${createHash('sha256').update(code).digest('hex').slice(0, 16)}.js`);
  fs.writeFileSync(file, code);
  return file;
}

/**
 * The Worker options that load this data converter's workflow code: the prebuilt bundle when it is
 * fresh, unless the worker runs domains from outside the tree (`domainFolders`), which are bundled at start.
 */
export function workflowCode(
  dataConverter: DataConverter | undefined,
  domainFolders: readonly string[] = [],
): WorkflowCode {
  const bundle = bundleFor(dataConverter);
  const fromSource = (why: string): WorkflowCode => ({
    options: {
      workflowsPath: domainFolders.length > 0 ? entryWithDomains(domainFolders) : WORKFLOWS_PATH,
      bundlerOptions: { preloadModules: [...PRELOADED_MODULES] },
    },
    workflowModules: [...WORKFLOW_INTERCEPTOR_MODULES],
    prebuilt: false,
    description: `bundling the workflow code at start, which takes seconds: ${why} (\`npm run build\` prebuilds it)`,
  });
  if (domainFolders.length > 0) return fromSource(`AGENT_DOMAINS adds ${domainFolders.join(', ')}`);
  if (!bundle) return fromSource('no prebuilt bundle was made with the converter paths of this data converter');
  const stale = bundleStaleness(bundle);
  if (stale) return fromSource(`${shortPath(bundle.file)} ${stale}`);
  return {
    options: { workflowBundle: { codePath: bundle.file } },
    prebuilt: true,
    description: `workflow code from the prebuilt bundle ${shortPath(bundle.file)}`,
  };
}

/** dist/… relative to the project, as a user would type it. */
function shortPath(file: string): string {
  return path.relative(path.dirname(DIST), file);
}
