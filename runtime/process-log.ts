// The lines a project process writes about itself (the worker's own lines beside the SDK's event log,
// the MCP server, the codec server, the server and build scripts). LOG_FORMAT=text (default) writes
// each line as it is said, on stderr; LOG_FORMAT=json writes one JSON object a line instead
// ({time, level, component, message}), so that a log shipper reads every line of every process.
// The text's leading `<component>: ` is the component field in JSON, not part of the message.

export type ProcessLogLevel = 'INFO' | 'WARN' | 'ERROR';

export interface ProcessLog {
  info(text: string): void;
  warn(text: string): void;
  error(text: string): void;
}

/** LOG_FORMAT as this log reads it: an unreadable value is the worker's to refuse, so text here. */
export function processLogFormat(env: NodeJS.ProcessEnv = process.env): 'text' | 'json' {
  return env.LOG_FORMAT?.trim().toLowerCase() === 'json' ? 'json' : 'text';
}

/** One line: the text itself, or its JSON object (control characters escaped by JSON). */
export function formatProcessLine(
  component: string,
  level: ProcessLogLevel,
  text: string,
  format: 'text' | 'json',
  now: Date = new Date(),
): string {
  if (format === 'text') return text;
  const prefix = `${component}: `;
  const message = text.startsWith(prefix) ? text.slice(prefix.length) : text;
  return JSON.stringify({ time: now.toISOString(), level, component, message });
}

export function processLog(
  component: string,
  env: NodeJS.ProcessEnv = process.env,
  write: (line: string) => void = (line) => void process.stderr.write(`${line}\n`),
): ProcessLog {
  const say = (level: ProcessLogLevel) => (text: string) =>
    write(formatProcessLine(component, level, text, processLogFormat(env)));
  return { info: say('INFO'), warn: say('WARN'), error: say('ERROR') };
}
