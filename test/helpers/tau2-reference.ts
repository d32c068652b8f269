// The reference: τ²-bench's retail tools (tools.py and data_model.py, unchanged, from tau2-retail/reference)
// run by Python through the small shim in test/tau2-shim, as one long-lived process speaking JSON lines.
// Where tau2-retail is: TAU2_RETAIL_DIR, else ../shared/tau2-retail beside the repository (as in CI).
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { repoRoot } from '../../local-servers/repo-root';

export function tau2RetailDir(): string {
  const dir = process.env.TAU2_RETAIL_DIR
    ? path.resolve(process.env.TAU2_RETAIL_DIR)
    : path.resolve(repoRoot(), '..', 'shared', 'tau2-retail');
  if (!fs.existsSync(path.join(dir, 'reference', 'tools.py'))) {
    throw new Error(`no τ²-bench retail reference at ${dir} (set TAU2_RETAIL_DIR to the tau2-retail folder)`);
  }
  return dir;
}

/** JSON with every non-ASCII character escaped, whatever encoding Python reads its stdin with. */
function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * A Python 3 that has pydantic 2 (the reference's data model needs it): TAU2_PYTHON, else python3 on
 * PATH, else pyenv's (Debian's own python3 has no pydantic and nothing may be installed from PyPI here).
 */
export function referencePython(): string {
  const home = process.env.HOME ?? '';
  const candidates = [process.env.TAU2_PYTHON, 'python3', path.join(home, '.pyenv', 'shims', 'python3')];
  for (const python of candidates) {
    if (!python) continue;
    const probe = spawnSync(python, ['-c', 'import pydantic, sys; sys.exit(0 if pydantic.VERSION >= "2" else 1)']);
    if (probe.status === 0) return python;
  }
  throw new Error('no Python 3 with pydantic 2 found (tried TAU2_PYTHON, python3, ~/.pyenv/shims/python3)');
}

export type ReferenceAnswer =
  { ok: true; result: string; hash?: string } | { ok: false; error_type: string; error: string; hash?: string };

export class ReferenceTools {
  private readonly waiting: ((line: string) => void)[] = [];
  private stderr = '';
  private exited: string | undefined;

  private constructor(private readonly child: ChildProcessWithoutNullStreams) {
    readline.createInterface({ input: child.stdout }).on('line', (line) => this.waiting.shift()?.(line));
    child.stderr.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    child.on('exit', (code, signal) => {
      this.exited = `the reference server exited (${signal ?? code}): ${this.stderr.slice(-2000)}`;
      for (const resolve of this.waiting.splice(0)) resolve('');
    });
  }

  static start(): ReferenceTools {
    const child = spawn(referencePython(), [path.join(repoRoot(), 'test', 'retail', 'tau2-shim', 'server.py')], {
      env: { ...process.env, TAU2_RETAIL_DIR: tau2RetailDir(), PYTHONIOENCODING: 'utf-8', PYTHONHASHSEED: '0' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    return new ReferenceTools(child);
  }

  async request<T = Record<string, unknown>>(request: Record<string, unknown>): Promise<T> {
    if (this.exited !== undefined) throw new Error(this.exited);
    const line = new Promise<string>((resolve) => this.waiting.push(resolve));
    this.child.stdin.write(`${asciiJson(request)}\n`);
    const text = await line;
    if (this.exited !== undefined) throw new Error(this.exited);
    return JSON.parse(text) as T;
  }

  call(tool: string, args: unknown, touch: Touch, hash: boolean): Promise<ReferenceAnswer> {
    return this.request<ReferenceAnswer>({ op: 'call', tool, args, touch, hash });
  }

  async close(): Promise<void> {
    if (this.exited !== undefined) return;
    const exit = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.stdin.end();
    await exit;
  }
}

/** The database entries a call may change, by collection: what both sides re-dump for the next hash. */
export interface Touch {
  orders: string[];
  users: string[];
}
