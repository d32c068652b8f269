// `.env` in the current directory, read with Node's own loader (process.loadEnvFile) by the worker,
// the CLI and the codec server, so the file `docker compose` reads serves `npm run worker` and
// `npx agent` too. A variable already in the environment wins: the loader never overrides one.
import { existsSync } from 'node:fs';

export const DOTENV_FILE = '.env';

/** Loads `file` into process.env when it exists; its path if it did. A file it cannot read is one line. */
export function loadDotEnv(file = DOTENV_FILE): string | undefined {
  if (!existsSync(file)) return undefined;
  try {
    process.loadEnvFile(file);
  } catch (err) {
    throw new Error(`${file}: cannot read it (${(err as Error).message.split('\n')[0]})`, { cause: err });
  }
  return file;
}
