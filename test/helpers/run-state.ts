// A run's state as carryState() takes it: fresh (no steps, nothing spent), plus what a test sets.
import { EMPTY_USAGE } from '../../common/cost/budget';
import type { RunState } from '../../workflows/agent/carry';

export function freshRunState(more: Partial<RunState> = {}): RunState {
  return {
    started_at_ms: 0,
    usage: { ...EMPTY_USAGE },
    trace: [],
    history: [],
    seen_calls: [],
    human_wait_ms: 0,
    effects: [],
    omitted: { trace: 0, history: 0 },
    ...more,
  };
}
