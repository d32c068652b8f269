// Child processes of the local servers (dev server, PostgreSQL, Temporal server): spawned with
// their output appended to a log file, stopped with a grace period, and never left running when
// this process exits.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// ---- make sure children never outlive a normally exiting parent -------------------------------

const liveChildren = new Set<ChildProcess>();
const tempDirs = new Set<string>();
let exitHookInstalled = false;

function killAllSync(): void {
  // Must be synchronous (runs in 'exit'): SIGKILL is the only thing guaranteed to finish in time.
  for (const child of liveChildren) {
    try {
      child.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }
  if (process.env.TEMPORAL_KEEP_DEV_DB) return;
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
}

export function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', killAllSync);
  // A signal's default action skips 'exit' handlers (e.g. node --test killing a timed-out file).
  // When nobody else handles the signal, clean up and re-raise it so the default behaviour stays.
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = (): void => {
      if (process.listenerCount(sig) > 1) return; // the host handles it and will exit normally
      killAllSync();
      process.removeListener(sig, onSignal);
      process.kill(process.pid, sig);
    };
    process.on(sig, onSignal);
  }
}

/** A temporary folder removed when this process exits (kept with TEMPORAL_KEEP_DEV_DB=1). */
export function makeTempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.add(dir);
  installExitHook();
  return dir;
}

export interface Running {
  child: ChildProcess;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  logOffset: number;
}

export interface SpawnLoggedOptions {
  env?: NodeJS.ProcessEnv;
  /** Run as this user (PostgreSQL refuses to run as root). */
  uid?: number;
  gid?: number;
}

/** Spawns `command args`, its stdout and stderr appended to logFile; the child is killed if we exit. */
export function spawnLogged(command: string, args: string[], logFile: string, opts: SpawnLoggedOptions = {}): Running {
  const logOffset = fs.existsSync(logFile) ? fs.statSync(logFile).size : 0;
  fs.appendFileSync(logFile, `\n--- ${new Date().toISOString()} ${command} ${args.join(' ')}\n`);
  const fd = fs.openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(command, args, {
      stdio: ['ignore', fd, fd],
      env: opts.env ?? process.env,
      uid: opts.uid,
      gid: opts.gid,
    });
  } finally {
    fs.closeSync(fd); // the child holds its own copy
  }
  installExitHook();
  liveChildren.add(child);
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      liveChildren.delete(child);
      resolve({ code, signal });
    });
    child.once('error', (err) => {
      liveChildren.delete(child);
      fs.appendFileSync(logFile, `spawn error: ${err.message}\n`);
      resolve({ code: -1, signal: null });
    });
  });
  return { child, exit, logOffset };
}

export function isRunning(run: Running | undefined): run is Running {
  return !!run && run.child.exitCode === null && run.child.signalCode === null;
}

/** Sends signal and waits for the exit; SIGKILL after graceMs. */
export async function terminate(run: Running | undefined, signal: NodeJS.Signals, graceMs = 10_000): Promise<void> {
  if (!isRunning(run)) return;
  run.child.kill(signal);
  const timer = setTimeout(() => run.child.kill('SIGKILL'), graceMs);
  await run.exit;
  clearTimeout(timer);
}

export function readLogTail(logFile: string, fromOffset: number, lines = 30): string {
  try {
    const text = fs.readFileSync(logFile).subarray(fromOffset).toString('utf8');
    return text.trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log output)';
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `ready` until it says yes; fails with the log's tail if the process exits first or time runs out. */
export async function waitReady(
  run: Running,
  what: string,
  ready: () => Promise<boolean>,
  logFile: string,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  void run.exit.then((e) => (exited = e));
  for (;;) {
    if (exited) {
      const how = exited.signal ? `signal ${exited.signal}` : `code ${exited.code}`;
      throw new Error(
        `${what} exited with ${how} before becoming ready (log: ${logFile}):\n${readLogTail(logFile, run.logOffset)}`,
      );
    }
    if (await ready()) return;
    if (Date.now() > deadline) {
      run.child.kill('SIGKILL');
      await run.exit;
      throw new Error(
        `${what} not ready after ${timeoutMs / 1000} s (log: ${logFile}):\n${readLogTail(logFile, run.logOffset)}`,
      );
    }
    await sleep(200);
  }
}
