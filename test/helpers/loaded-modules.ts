// Preloaded into a child process (NODE_OPTIONS=--require <this file, compiled>): when the process
// exits, writes every module file it loaded (require.cache, which dynamic imports compiled to
// CommonJS fill too) to LOADED_MODULES_FILE, one a line. test/setup/lazy-imports.e2e.test.ts reads it.
import fs from 'node:fs';

const file = process.env.LOADED_MODULES_FILE;
if (file) process.on('exit', () => fs.writeFileSync(file, Object.keys(require.cache).join('\n') + '\n'));
