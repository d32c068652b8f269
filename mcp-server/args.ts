// The command line of `npm run mcp`: checked up front, one clear line on a mistake.
export interface McpArgs {
  domain: string;
  /** Streamable HTTP on this port (0: any free port); absent: stdio. */
  port?: number;
  host?: string;
  effects: boolean;
  principal?: string;
}

const USAGE = 'usage: npm run mcp -- --domain <name> [--http PORT] [--host HOST] [--effects] [--principal ID]';

export function parseMcpArgs(argv: readonly string[], domains: readonly string[]): McpArgs | { error: string } {
  let domain: string | undefined;
  const out: Omit<McpArgs, 'domain'> = { effects: false };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const value = (): string | undefined => argv[++i];
    switch (flag) {
      case '--domain':
        domain = value();
        break;
      case '--http': {
        const raw = value() ?? '';
        const port = Number(raw);
        if (!/^\d+$/.test(raw) || port > 65535)
          return { error: `--http needs a port number (0: any free port), got "${raw}"` };
        out.port = port;
        break;
      }
      case '--host': {
        const host = value();
        if (!host) return { error: '--host needs a host name' };
        out.host = host;
        break;
      }
      case '--effects':
        out.effects = true;
        break;
      case '--principal': {
        const principal = value();
        if (!principal) return { error: '--principal needs an id' };
        out.principal = principal;
        break;
      }
      default:
        return { error: `unknown argument "${flag.slice(0, 64)}" (${USAGE})` };
    }
  }
  if (domain === undefined) return { error: `--domain is required (one of: ${domains.join(', ')})` };
  if (!domains.includes(domain))
    return { error: `unknown domain "${domain.slice(0, 64)}" (known: ${domains.join(', ')})` };
  return { domain, ...out };
}
