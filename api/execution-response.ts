// Writes an execution to the client as NDJSON, SSE or plain text (SPEC §9.4/9.5). The status is
// decided before the first byte (EX-7): the response is held until the model answered 200 (the
// relay's `start`) or the execution failed. A client that disconnects stops reading; the
// workflow goes on and the answer stays readable.
import type { Client } from '@temporalio/client';
import { WorkflowFailedError } from '@temporalio/client';
import type { Request, Response } from 'express';
import type { ExecutionStore } from '../db/execution-store';
import {
  Cancelled,
  InvalidInput,
  NotFound,
  Unavailable,
  UpstreamFailed,
  type AgentryError,
} from '../domain/errors';
import type { ClientEvent } from '../domain/stream-events';
import type { Relay } from '../infra/relay';
import { workflowIdFor, type ExecutionResult } from '../workflows/contracts';
import { describeFailure } from '../workflows/describe-failure';
import { ExecutionReader } from './execution-reader';
import type { ApiMetrics } from './metrics';
import type { StreamOption } from './schemas/llms';

export type StreamFormat = 'ndjson' | 'sse' | 'text';

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
  const handle = deps.temporal.workflow.getHandle(workflowIdFor(executionId));
  if (format === 'text')
    return respondWithText(deps, res, handle.result() as Promise<ExecutionResult>, trace);

  let gone = res.destroyed;
  res.on('close', () => (gone = true));
  const reader = new ExecutionReader(deps.relay, deps.executions, executionId, handle);
  try {
    await streamExecution(deps, req, res, reader, format, trace, afterSeq, () => gone);
  } finally {
    reader.close();
  }
}

async function streamExecution(
  deps: ExecutionResponseDeps,
  req: Request,
  res: Response,
  reader: ExecutionReader,
  format: 'ndjson' | 'sse',
  trace: TraceHeader | undefined,
  afterSeq: number,
  gone: () => boolean,
): Promise<void> {
  const held: ClientEvent[] = [];
  // Until the model answered (or the execution failed), nothing is written; a failure to read
  // here reaches the error handler, which still decides the status.
  while (!reader.sequencer.started && !reader.finished && !gone()) {
    const batch = await reader.next(READ_BLOCK_MS);
    held.push(...batch.events);
  }
  if (gone()) return;
  const early = held.find((e) => e.type === 'error');
  if (early && early.type === 'error' && !reader.sequencer.started) {
    await setTraceHeader(res, trace);
    sendFailure(res, early.status, early.detail);
    return;
  }

  res.status(200);
  // The model answered, so the trace stored before its call is there (EX-5).
  if (trace) res.set(TRACE_HEADER, trace.traceId);
  res.set({
    'Content-Type': CONTENT_TYPES[format],
    'Cache-Control': 'no-cache',
    'X-Accel-Buffering': 'no',
  });
  res.flushHeaders();
  const ping = format === 'sse' ? setInterval(() => res.write(': ping\n\n'), SSE_PING_MS) : undefined;
  // Each read's events go out in one write.
  const write = (events: ClientEvent[]): void => {
    let chunk = '';
    for (const event of events) if (event.seq > afterSeq) chunk += serialize(format, event);
    if (chunk !== '') res.write(chunk);
  };
  try {
    write(held);
    while (!reader.finished && !gone()) {
      const batch = await reader.next(READ_BLOCK_MS);
      write(batch.events);
      for (const lag of batch.lagsMs) deps.metrics.relayLag.observe(lag / 1000);
    }
  } catch (err) {
    // The status is sent: end in-band with exactly one terminal event (SPEC §9.5).
    req.log.warn({ err: (err as Error).message, executionId: reader.executionId }, 'stream interrupted');
    if (!reader.finished && !gone()) {
      write([
        reader.sequencer.synthesize({
          type: 'error',
          status: 503,
          detail: 'The answer stream was interrupted; re-attach or read the execution',
        }),
      ]);
    }
  } finally {
    clearInterval(ping);
    res.end();
  }
}

/** A failure decided before the first byte: its status and `{detail}` (503 with Retry-After). */
/** A failure before the first byte: the status of the failure, in the route family's error shape. */
function sendFailure(res: Response, status: number, detail: string): void {
  if (status === 503) res.set('Retry-After', '5');
  if (res.req.originalUrl.startsWith('/api/')) res.status(status).json({ success: false, error: detail });
  else res.status(status).json({ detail });
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
    const failure = describeFailure(err instanceof WorkflowFailedError ? err.cause : err);
    await setTraceHeader(res, trace);
    sendFailure(res, failure.status, failure.detail);
    return;
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
    const failure = describeFailure(err instanceof WorkflowFailedError ? err.cause : err);
    throw errorForStatus(failure.status, failure.detail);
  }
}

function errorForStatus(status: number, detail: string): AgentryError {
  switch (status) {
    case 400:
      return new InvalidInput(detail);
    case 404:
      return new NotFound(detail);
    case 499:
      return new Cancelled(detail);
    case 502:
      return new UpstreamFailed(detail);
    default:
      return new Unavailable(detail);
  }
}
