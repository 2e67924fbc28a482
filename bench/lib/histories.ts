// What the Temporal history of an execution shows: how many events, workflow tasks, activities
// and local-activity markers it took (sampled executions), and the median timeline of its events
// against the client's send and first-delta times (same machine clock).
import type { Client } from '@temporalio/client';
import { temporal as proto, type google } from '@temporalio/proto';
import { percentile, round } from './report';

const EventType = proto.api.enums.v1.EventType;

const eventMs = (ts: google.protobuf.ITimestamp | null | undefined): number =>
  ts ? Number(String(ts.seconds ?? 0)) * 1000 + (ts.nanos ?? 0) / 1e6 : NaN;

const shortType = (t: number | null | undefined): string =>
  (EventType[t ?? 0] ?? String(t)).replace(/^EVENT_TYPE_/, '').toLowerCase();

const mean = (values: number[]) => round(values.reduce((a, b) => a + b, 0) / Math.max(1, values.length), 1);

/** Mean counts per execution over the histories of `workflowIds`, and the first one's event sequence. */
export async function historyCounts(client: Client, workflowIds: string[]) {
  const rows: { events: number; workflowTasks: number; activities: number; markers: number }[] = [];
  let sequence = '';
  for (const id of workflowIds) {
    const events = (await client.workflow.getHandle(id).fetchHistory()).events ?? [];
    const count = (type: number) => events.filter((e) => e.eventType === type).length;
    rows.push({
      events: events.length,
      workflowTasks: count(EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED),
      activities: count(EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED),
      // Local activities are recorded as markers (one per completed local activity).
      markers: count(EventType.EVENT_TYPE_MARKER_RECORDED),
    });
    sequence ||= events.map((e) => shortType(e.eventType)).join(', ');
  }
  return {
    sampled: rows.length,
    events: mean(rows.map((r) => r.events)),
    workflow_tasks: mean(rows.map((r) => r.workflowTasks)),
    activities: mean(rows.map((r) => r.activities)),
    local_activity_markers: mean(rows.map((r) => r.markers)),
    first_sequence: sequence,
  };
}

export interface TimedExecution {
  workflowId: string;
  /** Wall-clock ms of sending the request. */
  sentAt: number;
  headersMs: number;
  ttftMs: number;
}

/**
 * For each execution, the offset (ms from the client's send) of every history event up to the
 * client's first delta, labelled by type (and activity type), then the client's response headers
 * and first delta. The median offset per label gives a timeline; consecutive differences are steps.
 */
export async function historyTimeline(client: Client, executions: TimedExecution[]) {
  const offsets = new Map<string, number[]>();
  const add = (label: string, ms: number) => {
    if (!offsets.has(label)) offsets.set(label, []);
    offsets.get(label)!.push(ms);
  };
  for (const ex of executions) {
    const events = (await client.workflow.getHandle(ex.workflowId).fetchHistory()).events ?? [];
    const activityOf = new Map<string, string>();
    const seen = new Map<string, number>();
    for (const e of events) {
      const at = eventMs(e.eventTime) - ex.sentAt;
      if (at > ex.ttftMs) break;
      let name = '';
      if (e.activityTaskScheduledEventAttributes) {
        name = e.activityTaskScheduledEventAttributes.activityType?.name ?? '?';
        activityOf.set(String(e.eventId), name);
      } else if (e.activityTaskStartedEventAttributes) {
        name = activityOf.get(String(e.activityTaskStartedEventAttributes.scheduledEventId)) ?? '?';
      } else if (e.activityTaskCompletedEventAttributes) {
        name = activityOf.get(String(e.activityTaskCompletedEventAttributes.scheduledEventId)) ?? '?';
      }
      const base = name ? `${shortType(e.eventType)} ${name}` : shortType(e.eventType);
      const n = (seen.get(base) ?? 0) + 1;
      seen.set(base, n);
      add(n > 1 ? `${base} #${n}` : base, at);
    }
    add('client: response headers', ex.headersMs);
    add('client: first delta', ex.ttftMs);
  }
  const timeline = [...offsets.entries()]
    .map(([label, values]) => ({ label, n: values.length, at: percentile(values, 50) }))
    .filter((row) => row.n >= executions.length / 2)
    .sort((a, b) => a.at - b.at);
  return timeline.map((row, i) => ({
    event: row.label,
    median_at_ms: round(row.at),
    step_ms: round(i === 0 ? row.at : row.at - timeline[i - 1]!.at),
  }));
}
