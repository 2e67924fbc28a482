// Reading a Temporal history as an attacker would: every string, every byte field as text, and
// every base64-looking run decoded at each alignment, so plaintext cannot hide in any encoding;
// and as an operator would: the local activities its markers record, with their results.
import type { Payload, PayloadCodec } from '@temporalio/common';

/**
 * Everything readable in a value: strings, the bytes of every binary field as UTF-8, and the
 * decoding of every base64-looking run found in those (so base64 at any alignment is seen too).
 */
export function readableText(value: unknown): string {
  const parts: string[] = [];
  const walk = (v: unknown, depth: number): void => {
    if (depth > 64 || v === null || v === undefined) return;
    if (typeof v === 'string') parts.push(v);
    else if (v instanceof Uint8Array)
      parts.push(Buffer.from(v).toString('utf8'), Buffer.from(v).toString('latin1'));
    else if (Array.isArray(v)) v.forEach((item) => walk(item, depth + 1));
    else if (typeof v === 'object') for (const item of Object.values(v)) walk(item, depth + 1);
  };
  walk(value, 0);
  const text = parts.join('\n');
  const decoded = [...text.matchAll(/[A-Za-z0-9+/_-]{12,}={0,2}/g)].flatMap(([run]) => {
    const out: string[] = [];
    for (let skip = 0; skip < 4; skip++) out.push(Buffer.from(run.slice(skip), 'base64').toString('utf8'));
    return out;
  });
  return [text, ...decoded].join('\n');
}

/** A local activity as its `core_local_activity` marker records it (the SDK's plain-JSON data). */
export interface LocalActivityMarker {
  activity_type: string;
  attempt: number;
}

/** The local activities of a history, in the order their markers were recorded. */
export function localActivityMarkers(
  events: { markerRecordedEventAttributes?: { markerName?: string | null; details?: unknown } | null }[],
): LocalActivityMarker[] {
  return events.flatMap((event) => {
    const marker = event.markerRecordedEventAttributes;
    const details = marker?.details as
      { data?: { payloads?: { data?: Uint8Array | null }[] | null } } | undefined;
    const data = details?.data?.payloads?.[0]?.data;
    if (marker?.markerName !== 'core_local_activity' || !data) return [];
    return [JSON.parse(Buffer.from(data).toString('utf8')) as LocalActivityMarker];
  });
}

type MarkerEvent = {
  markerRecordedEventAttributes?: {
    markerName?: string | null;
    details?: Record<string, { payloads?: Payload[] | null }> | null;
  } | null;
};

/** The results of the local activities of a type, in history order, decoded with `codec`. */
export async function localActivityResults(
  events: MarkerEvent[],
  activityType: string,
  codec: PayloadCodec,
): Promise<unknown[]> {
  const markers = localActivityMarkers(events);
  const recorded = events.filter(
    (e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity',
  );
  const results: unknown[] = [];
  for (const [i, marker] of markers.entries()) {
    if (marker.activity_type !== activityType) continue;
    const payload = recorded[i]?.markerRecordedEventAttributes?.details?.result?.payloads?.[0];
    if (!payload) throw new Error(`local activity ${activityType} #${i} recorded no result`);
    const [decoded] = await codec.decode([payload]);
    results.push(JSON.parse(Buffer.from(decoded!.data ?? new Uint8Array()).toString('utf8')));
  }
  return results;
}
