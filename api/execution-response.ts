// Writes an execution to the client as NDJSON, SSE or plain text (SPEC §9.4/9.5). The status is
// decided before the first byte (EX-7): the response is held until the model answered 200 (the
// relay's `start`) or the execution failed. A client that disconnects stops reading; the
// workflow goes on and the answer stays readable.
import type { Client } from '@temporalio/client';
import { WorkflowFailedError } from '@temporalio/client';
import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import type { ExecutionStore } from '../db/execution-store';
import { ExecutionFailed } from '../domain/errors';
import type { ClientEvent } from '../domain/stream-events';
import { loggedError } from '../infra/logger';
import type { Relay } from '../infra/relay';
import { workflowIdFor, type ExecutionResult } from '../workflows/contracts';
import { describeFailure } from '../workflows/describe-failure';
import { ExecutionReader } from './execution-reader';
import type { ApiMetrics } from './metrics';
import type { StreamOption } from './schemas/llms';

type StreamFormat = 'ndjson' | 'sse' | 'text';

export const formatOf = (stream: StreamOption | undefined): StreamFormat =>
  stream === false ? 'text' : stream === 'sse' ? 'sse' : 'ndjson';

export interface ExecutionResponseDeps {
  relay: Relay;
  executions: ExecutionStore;
  temporal: Client;
  metrics: ApiMetrics;
}

const READ_BLOCK_MS = 1000;
const SSE_PING_MS = 15_000;

/** A traced execution's trace id, and whether its trace is stored yet (EX-5 stores it first). */
export interface TraceHeader {
  traceId: string;
  stored(): Promise<boolean>;
}

const TRACE_HEADER = 'x-foundation4ai-tracing-id';

/** Sets the trace id header when the trace was stored (a failure before EX-5 stored none). */
async function setTraceHeader(res: Response, trace: TraceHeader | undefined): Promise<void> {
  if (trace && (await trace.stored())) res.set(TRACE_HEADER, trace.traceId);
}

export const CONTENT_TYPES: Record<Exclude<StreamFormat, 'text'>, string> = {
  ndjson: 'application/x-ndjson',
  sse: 'text/event-stream',
};

export function serialize(format: 'ndjson' | 'sse', event: ClientEvent): string {
  const json = JSON.stringify(event);
  return format === 'ndjson' ? `${json}\n` : `id: ${event.seq}\nevent: ${event.type}\ndata: ${json}\n\n`;
}

export async function respondWithExecution(
  deps: ExecutionResponseDeps,
  req: Request,
  res: Response,
  executionId: string,
  format: StreamFormat,
  /** SPEC §9.4: the trace id header, on the answer and on a failure after the trace was stored. */
  trace?: TraceHeader,
  /** DX-2: a re-attaching client already has the events up to this seq. */
  afterSeq = 0,
): Promise<void> {
  res.set('x-agentry-execution-id', executionId);
  if (format === 'text') {
    const handle = deps.temporal.workflow.getHandle(workflowIdFor(executionId));
    return respondWithText(deps, res, handle.result() as Promise<ExecutionResult>, trace);
  }

  const afterLast = (events: ClientEvent[]) => events.filter((event) => event.seq > afterSeq);
  let ping: NodeJS.Timeout | undefined;
  await followExecution(deps, req, res, executionId, {
    hold: true,
    async fail(failure) {
      await setTraceHeader(res, trace);
      throw failure;
    },
    open() {
      res.status(200);
      // The model answered, so the trace stored before its call is there (EX-5).
      if (trace) res.set(TRACE_HEADER, trace.traceId);
      res.set({
        'Content-Type': CONTENT_TYPES[format],
        'Cache-Control': 'no-cache',
        'X-Accel-Buffering': 'no',
      });
      res.flushHeaders();
      if (format === 'sse') ping = setInterval(() => res.write(': ping\n\n'), SSE_PING_MS);
    },
    // Each read's events go out in one write.
    write(events) {
      const chunk = afterLast(events)
        .map((event) => serialize(format, event))
        .join('');
      if (chunk !== '') res.write(chunk);
    },
    interrupted: 'The answer stream was interrupted; re-attach or read the execution',
    close() {
      clearInterval(ping);
    },
  });
}

/** How a client's format receives an execution followed by `followExecution`. */
export interface ExecutionSink {
  /** EX-7: no status before the model answered or the execution failed (else 200 at once). */
  hold: boolean;
  /**
   * The execution failed before the status was sent: set what headers the format adds and throw
   * it, so that the error handler answers it in the route family's shape.
   */
  fail(failure: ExecutionFailed): Promise<void>;
  /** The status is 200: headers, and whatever precedes the events. */
  open(): void;
  write(events: ClientEvent[]): void;
  /** The detail of the in-band 503 ending a stream whose relay could not be read. */
  interrupted: string;
  /** The response is about to end. */
  close(): void;
}

/** Who reads a followed execution: an HTTP response, or a WebSocket turn (api/responses-socket.ts). */
export interface ExecutionClient {
  /** The client went away (its connection closed): reading stops, the execution goes on. */
  gone(): boolean;
  log: Logger;
  /** The answer to this client is over (an HTTP response ends; a socket stays open for its next turn). */
  end(): void;
}

/** An HTTP client: gone once its response closed. */
function httpClient(req: Request, res: Response): ExecutionClient {
  let closed = res.destroyed;
  res.on('close', () => (closed = true));
  return { gone: () => closed, log: req.log, end: () => res.end() };
}

/**
 * Follows an execution's relay for one client: holds the status while `sink.hold` (SPEC EX-7),
 * then hands each read's events to the sink until the terminal event or the client's leaving; a
 * relay that fails after the status was sent ends the stream in-band with one terminal event
 * (SPEC §9.5). A failure to read before the status reaches the error handler, which decides it.
 */
export function followExecution(
  deps: ExecutionResponseDeps,
  req: Request,
  res: Response,
  executionId: string,
  sink: ExecutionSink,
): Promise<void> {
  return followExecutionFor(deps, httpClient(req, res), executionId, sink);
}

/** `followExecution` for any client (a WebSocket turn's too). */
export async function followExecutionFor(
  deps: ExecutionResponseDeps,
  client: ExecutionClient,
  executionId: string,
  sink: ExecutionSink,
): Promise<void> {
  const handle = deps.temporal.workflow.getHandle(workflowIdFor(executionId));
  const reader = new ExecutionReader(deps.relay, deps.executions, executionId, handle);
  try {
    const held: ClientEvent[] = [];
    while (sink.hold && !reader.sequencer.started && !reader.finished && !client.gone()) {
      held.push(...(await reader.next(READ_BLOCK_MS)).events);
    }
    if (client.gone()) return;
    const early = held.find((e) => e.type === 'error');
    if (early?.type === 'error' && !reader.sequencer.started)
      return await sink.fail(new ExecutionFailed(early.detail, early.status));
    sink.open();
    try {
      sink.write(held);
      while (!reader.finished && !client.gone()) {
        const batch = await reader.next(READ_BLOCK_MS);
        sink.write(batch.events);
        for (const lag of batch.lagsMs) deps.metrics.relayLag.observe(lag / 1000);
      }
    } catch (err) {
      client.log.warn({ err: loggedError(err), executionId }, 'stream interrupted');
      if (!reader.finished && !client.gone())
        sink.write([reader.sequencer.synthesize({ type: 'error', status: 503, detail: sink.interrupted })]);
    } finally {
      sink.close();
      client.end();
    }
  } finally {
    reader.close();
  }
}

async function respondWithText(
  deps: ExecutionResponseDeps,
  res: Response,
  result: Promise<ExecutionResult>,
  trace: TraceHeader | undefined,
): Promise<void> {
  let outcome: ExecutionResult;
  try {
    outcome = await result;
  } catch (err) {
    await setTraceHeader(res, trace);
    throw failureOf(err);
  }
  const answer = await deps.executions.getPayload<{ text: string }>(outcome.answerPayloadId);
  if (!answer) {
    res.status(410).json({ detail: 'The answer is no longer retained' });
    return;
  }
  if (trace) res.set(TRACE_HEADER, trace.traceId);
  res.status(200).type('text/plain; charset=utf-8').send(answer.text);
}

/**
 * The result of an execution answered as one JSON body (the gateway and chains of seed 002): a
 * failed execution becomes the error of its status, so each route family keeps its error shape.
 */
export async function executionOutcome<R>(
  deps: Pick<ExecutionResponseDeps, 'temporal'>,
  executionId: string,
): Promise<R> {
  try {
    return (await deps.temporal.workflow.getHandle(workflowIdFor(executionId)).result()) as R;
  } catch (err) {
    throw failureOf(err);
  }
}

/** A failed workflow's result as the error its status answers. */
function failureOf(err: unknown): ExecutionFailed {
  const failure = describeFailure(err instanceof WorkflowFailedError ? err.cause : err);
  return new ExecutionFailed(failure.detail, failure.status);
}
