// `npm run build`, after tsc: bundles the workflow code once, for every data converter the worker
// may run with (worker/workflow-bundle.ts), so that a worker starts by reading a file instead of
// running webpack. Each bundle is written to a temporary file and renamed: a worker starting
// meanwhile reads the old bundle or the new one, never half of one.
import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { PREBUILT_BUNDLES, WORKFLOWS_PATH } from '../worker/workflow-bundle';
import { processLog } from '../runtime/process-log';

/** stderr; one JSON object a line with LOG_FORMAT=json. */
const log = processLog('bundle-workflows');

async function main(): Promise<void> {
  for (const bundle of PREBUILT_BUNDLES) {
    const started = Date.now();
    const { code } = await bundleWorkflowCode({
      workflowsPath: WORKFLOWS_PATH,
      failureConverterPath: bundle.failureConverterPath,
      logger: warningsOnly(),
    });
    const tmp = `${bundle.file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, code);
    fs.renameSync(tmp, bundle.file);
    const mb = (Buffer.byteLength(code) / 1024 ** 2).toFixed(1);
    log.info(`bundled ${path.relative(process.cwd(), bundle.file)} (${mb} MB, ${Date.now() - started} ms)`);
  }
}

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
