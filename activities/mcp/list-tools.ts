// The activity `mcp_list_tools`: what a server lists (every page), as the run records it once.
import { createHash } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { schemaRefusal } from '../../common/mcp/checked-schema';
import type { McpDiscovery, McpToolListing } from '../../common/mcp/discovery';
import type { McpConnection } from './connect';
import { McpConfigError, withMcpClient } from './connect';
import { MCP_CONFIG } from '../../common/agent-messages';

export interface ListToolsInput {
  server: string;
  connection: McpConnection;
}

const MAX_PAGES = 20;
/** A listing's session scope: no run's (a listing carries no run identity). */
const LISTING = 'listing';

export async function mcp_list_tools(input: ListToolsInput): Promise<McpDiscovery> {
  const { cancellationSignal: signal } = Context.current();
  try {
    const tools = await withMcpClient(input.server, input.connection, signal, LISTING, async (client) => {
      const found: McpToolListing[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < MAX_PAGES; page++) {
        const listed = await client.listTools(cursor ? { cursor } : undefined, { signal });
        for (const tool of listed.tools)
          found.push({ name: tool.name, description: tool.description ?? '', inputSchema: { ...tool.inputSchema } });
        cursor = listed.nextCursor;
        if (!cursor) break;
      }
      return found.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    });
    const hash = createHash('sha256').update(JSON.stringify(tools)).digest('hex');
    // Why a tool will not be offered, recorded with the listing (the workflow applies the same check).
    const unavailable = tools.flatMap((tool) => {
      const reason = schemaRefusal(tool.inputSchema);
      return reason === undefined ? [] : [{ name: tool.name, reason }];
    });
    return { server: input.server, tools, hash, ...(unavailable.length > 0 ? { unavailable } : {}) };
  } catch (err) {
    if (err instanceof McpConfigError) throw ApplicationFailure.nonRetryable(err.message, MCP_CONFIG);
    throw err;
  }
}
