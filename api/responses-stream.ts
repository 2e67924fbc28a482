// Writes an execution to a client as the Responses API's server-sent events (issue 28), read with
// the same ExecutionReader as the native formats (api/execution-response.ts). A create without
// `background` holds its status until the model answered, as SPEC EX-7 says, so that a failure
// before that point is an HTTP error the SDK raises; a background create and a GET stream answer
// 200 at once (the client needs the id to resume) and report any failure in-band.
import type { Request, Response } from 'express';
import type { ClientEvent } from '../domain/stream-events';
import { followExecution, type ExecutionResponseDeps, type TraceHeader } from './execution-response';
import { EXECUTION_ID_HEADER } from './openai-errors';
import { ResponsesEventStream, type ResponsesEvent } from './responses-events';
import type { ResponseView } from './responses-objects';

const PING_MS = 15_000;
const TRACE_HEADER = 'x-foundation4ai-tracing-id';

interface ResponsesStreamOptions {
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
  const events = new ResponsesEventStream(view);
  const after = options.startingAfter ?? -1;
  const write = (list: ResponsesEvent[]): void => {
    const chunk = list
      .filter((event) => event.sequence_number > after)
      .map(frame)
      .join('');
    if (chunk !== '') res.write(chunk);
  };
  let ping: NodeJS.Timeout | undefined;
  await followExecution(deps, req, res, view.id, {
    hold: options.hold,
    async fail(failure) {
      if (options.trace && (await options.trace.stored())) res.set(TRACE_HEADER, options.trace.traceId);
      throw failure;
    },
    open() {
      // Held until the model answered, so the trace stored before its call is there (EX-5).
      if (options.trace && options.hold) res.set(TRACE_HEADER, options.trace.traceId);
      ping = startEventStream(res);
      write(events.begin());
    },
    write(list) {
      write(list.flatMap((event) => events.accept(event)));
    },
    interrupted: 'The answer stream was interrupted; resume it or retrieve the response',
    close() {
      clearInterval(ping);
    },
  });
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
