// `npm run server`: a foreground Temporal dev server for local development (Ctrl-C to stop).
import { isServerReachable, startDevServer } from './dev-server';
import { localServerConfig } from './local-server';

async function main(): Promise<number> {
  const cfg = localServerConfig();
  const address = `127.0.0.1:${cfg.port}`;
  if (await isServerReachable(address, cfg.namespace)) {
    console.log(
      `Temporal server already answers at ${address} (namespace ${cfg.namespace}): reusing it, nothing to start.`,
    );
    return 0;
  }

  console.log(`Starting Temporal dev server (db ${cfg.dbFile}) ...`);
  const started = Date.now();
  const server = await startDevServer({
    port: cfg.port,
    uiPort: cfg.uiPort,
    dbFile: cfg.dbFile,
    namespace: cfg.namespace,
    codecEndpoint: cfg.codecEndpoint,
  });
  console.log(`Temporal dev server ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  console.log(`  address:   ${server.address}   (namespace ${server.namespace})`);
  console.log(`  Web UI:    ${server.uiUrl}`);
  console.log(`  log file:  ${server.logFile}`);
  if (cfg.codecEndpoint) {
    console.log(
      `  codec:     ${cfg.codecEndpoint} (payloads are encrypted: run \`npm run codec-server\`, sign in at ${cfg.codecEndpoint}/login)`,
    );
  }
  console.log('Press Ctrl-C to stop.');

  return new Promise<number>((resolve) => {
    let stopping = false;
    const shutdown = (reason: string): void => {
      if (stopping) return;
      stopping = true;
      console.log(`\n${reason}: stopping Temporal dev server ...`);
      server.stop().then(
        () => {
          console.log('Stopped.');
          resolve(0);
        },
        (err: Error) => {
          console.error(`stop failed: ${err.message}`);
          resolve(1);
        },
      );
    };
    process.on('SIGINT', shutdown);
    process.on('SIGTERM', shutdown);
    process.on('SIGHUP', shutdown);
    // `npm run server` runs us under `sh -c "... && node ..."`: a SIGTERM to npm kills sh but not us,
    // so notice being orphaned instead of leaving the server running.
    const parent = process.ppid;
    setInterval(() => {
      if (process.ppid !== parent) shutdown('parent process exited');
    }, 1_000).unref();
    void server.exited().then(({ code, signal }) => {
      if (stopping) return;
      console.error(`Temporal dev server exited unexpectedly (${signal ?? `code ${code}`}); see ${server.logFile}`);
      resolve(1);
    });
  });
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    console.error(`server: ${err.message}`);
    process.exit(1);
  },
);
