// Writes an execution to a client as the Responses API's server-sent events (issue 28), read with
// the same ExecutionReader as the native formats (api/execution-response.ts). A create without
// `background` holds its status until the model answered, as SPEC EX-7 says, so that a failure
// before that point is an HTTP error the SDK raises; a background create and a GET stream answer
// 200 at once (the client needs the id to resume) and report any failure in-band.
import type { Request, Response } from 'express';
import type { ClientEvent } from '../domain/stream-events';
import { workflowIdFor } from '../workflows/contracts';
import { ExecutionReader } from './execution-reader';
import type { ExecutionResponseDeps, TraceHeader } from './execution-response';
import { EXECUTION_ID_HEADER, sendOpenAiError } from './openai-errors';
import { ResponsesEventStream, type ResponsesEvent } from './responses-events';
import type { ResponseView } from './responses-objects';

const READ_BLOCK_MS = 1000;
const PING_MS = 15_000;
const TRACE_HEADER = 'x-foundation4ai-tracing-id';

export interface ResponsesStreamOptions {
  /** EX-7: no status before the model answered (or the execution failed). */
  hold: boolean;
  /** GET `?starting_after=`: only events with a greater `sequence_number`. */
  startingAfter?: number | undefined;
  trace?: TraceHeader | undefined;
}

/** One event in SSE framing; `id` lets an EventSource resume with Last-Event-ID. */
const frame = (event: ResponsesEvent): string =>
  `event: ${event.type}\nid: ${event.sequence_number}\ndata: ${JSON.stringify(event)}\n\n`;

function startEventStream(res: Response): NodeJS.Timeout {
  res.status(200).set({
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache',
    'X-Accel-Buffering': 'no',
  });
  res.flushHeaders();
  // A comment: SSE parsers (the SDKs' too) skip it, so it numbers nothing.
  return setInterval(() => res.write(': keepalive\n\n'), PING_MS);
}

export async function streamResponse(
  deps: ExecutionResponseDeps,
  req: Request,
  res: Response,
  view: ResponseView,
  options: ResponsesStreamOptions,
): Promise<void> {
  res.set(EXECUTION_ID_HEADER, view.id);
  let gone = res.destroyed;
  res.on('close', () => (gone = true));
  const handle = deps.temporal.workflow.getHandle(workflowIdFor(view.id));
  const reader = new ExecutionReader(deps.relay, deps.executions, view.id, handle);
  const held: ClientEvent[] = [];
  while (options.hold && !reader.sequencer.started && !reader.finished && !gone) {
    held.push(...(await reader.next(READ_BLOCK_MS)).events);
  }
  if (gone) return;
  const early = held.find((e) => e.type === 'error');
  if (early?.type === 'error' && !reader.sequencer.started) {
    if (options.trace && (await options.trace.stored())) res.set(TRACE_HEADER, options.trace.traceId);
    sendOpenAiError(res, early.status, early.detail);
    return;
  }
  // Held until the model answered, so the trace stored before its call is there (EX-5).
  if (options.trace && options.hold) res.set(TRACE_HEADER, options.trace.traceId);
  const ping = startEventStream(res);
  const events = new ResponsesEventStream(view);
  const after = options.startingAfter ?? -1;
  const write = (list: ResponsesEvent[]): void => {
    for (const event of list) if (event.sequence_number > after) res.write(frame(event));
  };
  try {
    write(events.begin());
    for (const event of held) write(events.accept(event));
    while (!reader.finished && !gone) {
      const batch = await reader.next(READ_BLOCK_MS);
      for (const event of batch.events) write(events.accept(event));
      for (const lag of batch.lagsMs) deps.metrics.relayLag.observe(lag / 1000);
    }
  } catch (err) {
    // The status is sent: end in-band, as the native formats do (SPEC §9.5).
    req.log.warn({ err: (err as Error).message, executionId: view.id }, 'stream interrupted');
    if (!reader.finished && !gone) {
      const detail = 'The answer stream was interrupted; resume it or retrieve the response';
      write(events.accept(reader.sequencer.synthesize({ type: 'error', status: 503, detail })));
    }
  } finally {
    clearInterval(ping);
    res.end();
  }
}

/**
 * A finished execution whose relay log is gone (SPEC §9.6: it expires an hour after its last
 * event), rebuilt from its record and stored answer. From the start it is numbered as any stream;
 * after `starting_after` (whose events cannot be rebuilt) it starts the response over there.
 */
export function sendArchivedResponse(
  res: Response,
  view: ResponseView,
  archived: ClientEvent[],
  startingAfter: number | undefined,
): void {
  const events = new ResponsesEventStream(view);
  const first = startingAfter === undefined ? events.begin() : events.resumeAfter(startingAfter);
  const all = [...first, ...archived.flatMap((e) => events.accept(e))];
  res.set(EXECUTION_ID_HEADER, view.id);
  res.status(200).set({ 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache' });
  res.end(all.map(frame).join(''));
}
