// A command on a fresh pseudo-terminal (util-linux `script`), as a person at a terminal runs it:
// it reads a TTY, and a Ctrl-C written to its stdin reaches it as SIGINT from the line discipline.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

/** Spawns `command` on a pseudo-terminal; script's exit code is the command's own (`-e`). */
export function spawnOnTerminal(command: string[], env: NodeJS.ProcessEnv): ChildProcessWithoutNullStreams {
  const quoted = command.map((part) => `'${part.replace(/'/g, `'\\''`)}'`).join(' ');
  // `exec`: no shell stays between the terminal and the command. script runs it with $SHELL or
  // /bin/sh, and dash does not exec a lone command: it would die of a Ctrl-C itself (exit 130,
  // whatever the command did), which is what CI saw.
  return spawn('script', ['-qefc', `exec ${quoted}`, '/dev/null'], { env });
}
