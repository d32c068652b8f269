// Where a durable run's time went, read from its history.
import { tsToMs } from '@temporalio/common/lib/time';
import type { temporal } from '@temporalio/proto';

/**
 * Where the time of one durable run went, from its history (server timestamps). A read-only tool
 * run as a local activity has no events of its own: its time is inside the workflow task's run.
 */
export interface Breakdown {
  serverMs: number;
  activityQueueMs: number;
  decideMs: number;
  toolMs: number;
  wftQueueMs: number;
  wftRunMs: number;
  events: number;
}

export function breakdown(events: temporal.api.history.v1.IHistoryEvent[]): Breakdown {
  const t = (e: temporal.api.history.v1.IHistoryEvent) => tsToMs(e.eventTime);
  const byId = new Map<number, temporal.api.history.v1.IHistoryEvent>();
  for (const e of events) byId.set(Number(e.eventId), e);
  const b: Breakdown = {
    serverMs: 0,
    activityQueueMs: 0,
    decideMs: 0,
    toolMs: 0,
    wftQueueMs: 0,
    wftRunMs: 0,
    events: events.length,
  };
  if (events.length) b.serverMs = t(events[events.length - 1]!) - t(events[0]!);
  for (const e of events) {
    if (e.activityTaskStartedEventAttributes) {
      const s = byId.get(Number(e.activityTaskStartedEventAttributes.scheduledEventId));
      if (s) b.activityQueueMs += t(e) - t(s);
    }
    if (e.activityTaskCompletedEventAttributes) {
      const a = e.activityTaskCompletedEventAttributes;
      const s = byId.get(Number(a.scheduledEventId));
      const st = byId.get(Number(a.startedEventId));
      if (s && st) {
        const isDecide = s.activityTaskScheduledEventAttributes?.activityType?.name === 'decide';
        if (isDecide) b.decideMs += t(e) - t(st);
        else b.toolMs += t(e) - t(st);
      }
    }
    if (e.workflowTaskStartedEventAttributes) {
      const s = byId.get(Number(e.workflowTaskStartedEventAttributes.scheduledEventId));
      if (s) b.wftQueueMs += t(e) - t(s);
    }
    if (e.workflowTaskCompletedEventAttributes) {
      const st = byId.get(Number(e.workflowTaskCompletedEventAttributes.startedEventId));
      if (st) b.wftRunMs += t(e) - t(st);
    }
  }
  return b;
}

export function eventTypeName(e: temporal.api.history.v1.IHistoryEvent): string {
  const key = Object.keys(e).find((k) => k.endsWith('EventAttributes') && (e as Record<string, unknown>)[k]);
  return key ? key.replace(/EventAttributes$/, '') : String(e.eventType);
}
