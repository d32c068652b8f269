/** What tests and scripts need of a Temporal server they started: the dev server or the PostgreSQL-backed one. */
export interface TemporalServerHandle {
  kind: 'dev' | 'postgres';
  /** host:port of the frontend gRPC service */
  address: string;
  namespace: string;
  /** The Web UI, where this kind of server has one. */
  uiUrl: string | undefined;
  logFile: string;
  /** pid of the current server process (changes after restart) */
  readonly pid: number;
  /** SIGTERM, wait for exit (SIGKILL after a grace period). */
  stop(): Promise<void>;
  /** SIGKILL, wait for exit (a crash). */
  kill(): Promise<void>;
  /** Start again on the same ports and data (stopping first if still running), wait until healthy. */
  restart(): Promise<void>;
  /** Resolves when the current server process exits, with its exit code or signal. */
  exited(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}
