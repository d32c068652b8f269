// Where the support tools read their facts: the built-in data, or a JSON file named by AGENT_DATA_FILE
// (read on every call, as a real service would be asked every time). A missing or broken file is
// an outage: the tool's activity fails and Temporal retries it.
import { readFile } from 'node:fs/promises';
import type { DataSource, SupportData } from '../data';
import { readEnv } from '../../../runtime/env-vars';
import { SEED_DATA } from '../seed-data';

export type { DataSource } from '../data';

export function dataSourceFromEnv(env: NodeJS.ProcessEnv = process.env): DataSource {
  const file = readEnv('AGENT_DATA_FILE', env);
  if (!file) return async () => SEED_DATA;
  return async () => {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      throw new Error(
        `support data unavailable: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
        { cause: err },
      );
    }
    try {
      return JSON.parse(text) as SupportData;
    } catch {
      throw new Error(`support data unavailable: ${file} is not valid JSON`);
    }
  };
}
