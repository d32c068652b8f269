// What a prebuilt workflow bundle is made of, by content: a hash of every compiled file the workflow
// code may import (workflows/, common/, domains/ — the ESLint zones), of the SDK it was bundled with
// and of the bundle's options. `npm run build` writes it beside the bundle (`<bundle>.inputs.json`)
// and bundles again only when it differs; a worker compares it before trusting the bundle. Content,
// not timestamps: `tsc` rewriting a file with the same bytes costs no bundle, a manual edit is caught.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** The recorded inputs of one bundle. */
export interface BundleInputs {
  /** The SDK's version and the bundle's options: a change here rebuilds as a changed file does. */
  options: Record<string, string>;
  /** dist-relative path → sha256 of its bytes. */
  files: Record<string, string>;
}

/** The record beside a bundle. */
export function inputsFileOf(bundleFile: string): string {
  return `${bundleFile}.inputs.json`;
}

/** The inputs as they are now: every file under `dirs` but source maps, named relative to `root`. */
export function currentInputs(dirs: readonly string[], root: string, options: Record<string, string>): BundleInputs {
  const files: Record<string, string> = {};
  for (const dir of dirs) {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true, recursive: true });
    } catch {
      continue; // a folder the build has not made (yet): no inputs from it
    }
    for (const entry of entries) {
      if (!entry.isFile() || entry.name.endsWith('.map')) continue;
      // Node 20.x names the entry's folder `path` (older) or `parentPath` (newer).
      const parent = (entry as fs.Dirent & { parentPath?: string }).parentPath ?? entry.path;
      const file = path.join(parent, entry.name);
      files[path.relative(root, file)] = createHash('sha256').update(fs.readFileSync(file)).digest('hex');
    }
  }
  return { options, files: Object.fromEntries(Object.entries(files).sort(([a], [b]) => a.localeCompare(b))) };
}

/** The recorded inputs of `bundleFile`, or undefined when there is no readable record. */
export function recordedInputs(bundleFile: string): BundleInputs | undefined {
  try {
    const parsed = JSON.parse(fs.readFileSync(inputsFileOf(bundleFile), 'utf8')) as Partial<BundleInputs>;
    if (typeof parsed.options !== 'object' || typeof parsed.files !== 'object') return undefined;
    if (parsed.options === null || parsed.files === null) return undefined;
    return parsed as BundleInputs;
  } catch {
    return undefined;
  }
}

/** The first difference between two records, said as a reader needs it; undefined when they are equal. */
export function inputsDifference(recorded: BundleInputs, current: BundleInputs): string | undefined {
  for (const key of new Set([...Object.keys(recorded.options), ...Object.keys(current.options)])) {
    if (recorded.options[key] !== current.options[key]) {
      return `was made with ${key}=${recorded.options[key] ?? '(none)'}, now ${current.options[key] ?? '(none)'}`;
    }
  }
  for (const file of Object.keys(current.files)) {
    if (!(file in recorded.files)) return `does not contain ${file}`;
    if (recorded.files[file] !== current.files[file]) return `was made from another ${file}`;
  }
  for (const file of Object.keys(recorded.files)) {
    if (!(file in current.files)) return `was made with ${file}, which is gone`;
  }
  return undefined;
}

/** Writes `inputs` beside `bundleFile`, atomically (a worker reads the old record or the new one). */
export function writeInputs(bundleFile: string, inputs: BundleInputs): void {
  const file = inputsFileOf(bundleFile);
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(inputs, null, 1) + '\n');
  fs.renameSync(tmp, file);
}
