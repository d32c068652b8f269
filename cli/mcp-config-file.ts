// `--mcp FILE`: the MCP servers a run may use, read and checked before anything connects; a
// problem is one line naming the file and the field.
import { readFileSync } from 'node:fs';
import { parseMcpConfig } from '../common/mcp/config';
import type { McpConfig } from '../common/mcp/config';

export function readMcpConfigFile(file: string): McpConfig | { error: string } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    return { error: `--mcp: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})` };
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { error: `--mcp: ${file} is not valid JSON` };
  }
  const parsed = parseMcpConfig(raw);
  return parsed.ok ? parsed.config : { error: `--mcp: ${file}: ${parsed.error}` };
}
