// What every suite is run with and returns, besides what it runs (scenarios, τ² tasks).
import type { TemporalEnv } from '../../runtime/temporal-env';
import type { PhaseName, PhaseResult } from './phases';

export interface SuiteRunOptions<T> {
  chaos: boolean;
  seed: number;
  /** Real model: the workers get OPENAI_API_KEY / OPENAI_BASE_URL / OPENAI_MODEL (and AGENT_PRICES_FILE) from this env. */
  live?: NodeJS.ProcessEnv;
  workers: number;
  concurrency: number;
  /** A running server instead of one of the eval's own (then chaos cannot restart it). */
  server?: Pick<TemporalEnv, 'address' | 'namespace' | 'uiUrl'>;
  log: (line: string) => void;
  /** Called as each trial ends (the terminal's progress). */
  onTrial?: (phase: PhaseName, done: number, total: number, trial: T) => void;
}

export interface SuiteRunResult<T> {
  phases: PhaseResult<T>[];
  env: TemporalEnv;
  /** Whether the Web UI links still work (the server outlives the eval only with --server). */
  serverKept: boolean;
}
