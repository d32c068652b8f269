// `npm run mcp -- --domain support|retail|<AGENT_DOMAINS one> [--http PORT] [--host H] [--effects] [--principal ID]`:
// serves a domain's tools as an MCP server, over stdio (default) or streamable HTTP. The domain's
// systems of record are the worker's (the same environment variables). Logs go to stderr: on
// stdio, stdout carries the protocol.
import { randomUUID } from 'node:crypto';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { DOMAIN_NAMES, DOMAINS } from '../domains/index';
import { createDomainServer } from './domain-server';
import type { DomainServerOptions } from './domain-server';
import { serveHttp } from './http';
import { registerDomainFolders, servicesOf } from '../domains/backends';
import { parseMcpArgs } from './args';
import { toolPauseFromEnv } from '../activities/tools/drill';
import { refundFaultsFromEnv } from '../activities/index';
import { KeyAttempts } from './key-attempts';
import { runSecret } from '../activities/mcp/run-proof';
import { processLog } from '../runtime/process-log';

const VERSION = '0.1.0';
/** stderr; one JSON object a line with LOG_FORMAT=json. */
const log = processLog('mcp');

async function main(): Promise<void> {
  // Domains kept outside the tree (AGENT_DOMAINS), as the worker runs them.
  registerDomainFolders();
  const parsed = parseMcpArgs(process.argv.slice(2), DOMAIN_NAMES);
  if ('error' in parsed) {
    log.error(`mcp: ${parsed.error}`);
    process.exit(2);
  }
  const domain = DOMAINS[parsed.domain]!;
  const options: DomainServerOptions = {
    domain,
    services: servicesOf(domain.name),
    effects: parsed.effects,
    version: VERSION,
    pause: toolPauseFromEnv(),
    faults: refundFaultsFromEnv(),
    attempts: new KeyAttempts(),
    log: (line) => log.info(`mcp: ${line}`),
    ...(parsed.principal !== undefined ? { principal: parsed.principal } : {}),
    ...(runSecret() !== undefined ? { runSecret: runSecret() } : {}),
  };
  if (parsed.principal !== undefined) {
    const problem = domain.principal.fromAuthentication
      ? `the ${domain.name} domain learns whom it acts for by authentication: --principal is not accepted`
      : domain.principal.check(parsed.principal);
    if (problem) {
      log.error(`mcp: --principal: ${problem}`);
      process.exit(2);
    }
  }
  if (parsed.port === undefined) {
    // One session per process: its records are this process's.
    await createDomainServer(options, `mcp-stdio-${randomUUID()}`).connect(new StdioServerTransport());
    log.info(`mcp: serving the ${domain.name} domain on stdio`);
    return;
  }
  const principals = new Map<string, string>();
  const server = await serveHttp((key) => createDomainServer(options, key, principals), parsed.port, parsed.host);
  log.info(`mcp: serving the ${domain.name} domain at ${server.url}`);
  const stop = () => void server.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err: unknown) => {
  log.error(`mcp: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
