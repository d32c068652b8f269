// `npm run build`, after tsc: bundles the workflow code once, for every data converter the worker
// may run with (worker/workflow-bundle.ts), so that a worker starts by reading a file instead of
// running webpack. A bundle whose recorded inputs (worker/bundle-inputs.ts: the content of every
// compiled file it may contain, the SDK, the options) are those of now is left as it is, so a build
// where nothing changed costs no webpack; the SDK's bundler is loaded only when one is needed. Each
// bundle is written to a temporary file and renamed, then its record: a worker starting meanwhile
// reads the old bundle or the new one, never half of one, and never trusts a bundle its record does not describe.
import fs from 'node:fs';
import path from 'node:path';
import type { BundleOptions } from '@temporalio/worker';
import { writeInputs } from '../worker/bundle-inputs';
import {
  PREBUILT_BUNDLES,
  PREBUILT_DEVTOOL,
  PRELOADED_MODULES,
  WORKFLOWS_PATH,
  WORKFLOW_INTERCEPTOR_MODULES,
  bundleStaleness,
  inputsNow,
} from '../worker/workflow-bundle';
import { processLog } from '../runtime/process-log';

/** stderr; one JSON object a line with LOG_FORMAT=json. */
const log = processLog('bundle-workflows');

async function main(): Promise<void> {
  for (const bundle of PREBUILT_BUNDLES) {
    const name = path.relative(process.cwd(), bundle.file);
    const stale = bundleStaleness(bundle);
    if (!stale) continue; // up to date: silent, as tsc -b is
    const started = Date.now();
    // Read before bundling: a file changed while webpack runs leaves a record that differs, so the next build bundles again.
    const inputs = inputsNow(bundle);
    // The bundler (webpack, swc) costs seconds to load: only now that a bundle is made.
    const { bundleWorkflowCode } = await import('@temporalio/worker');
    const { code } = await bundleWorkflowCode({
      workflowsPath: WORKFLOWS_PATH,
      workflowInterceptorModules: [...WORKFLOW_INTERCEPTOR_MODULES],
      preloadModules: [...PRELOADED_MODULES],
      failureConverterPath: bundle.failureConverterPath,
      logger: warningsOnly(),
      webpackConfigHook: withDevtool,
    });
    const tmp = `${bundle.file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, code);
    fs.renameSync(tmp, bundle.file);
    writeInputs(bundle.file, inputs);
    const mb = (Buffer.byteLength(code) / 1024 ** 2).toFixed(1);
    log.info(`bundled ${name} (${mb} MB, ${Date.now() - started} ms): it ${stale}`);
  }
}

const withDevtool: NonNullable<BundleOptions['webpackConfigHook']> = (config) => ({
  ...config,
  devtool: PREBUILT_DEVTOOL,
});

/** webpack's statistics go to info; keep warnings and errors. */
function warningsOnly() {
  const quiet = () => undefined;
  const say = (message: string) => log.warn(`bundle-workflows: ${message}`);
  return { log: quiet, trace: quiet, debug: quiet, info: quiet, warn: say, error: say };
}

main().catch((err: unknown) => {
  log.error(`bundle-workflows: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
