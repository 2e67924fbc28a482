// The execution resource (SPEC §15): read it (DX-1), re-attach to its stream (DX-2) and cancel
// it (DX-3). Only the API key that started an execution, or an admin, sees it; for anyone else it
// does not exist (404).
import { WorkflowNotFoundError } from '@temporalio/client';
import { Router, type Request, type Response } from 'express';
import type { StoredAnswer } from '../../services/answers';
import type { StopNotices } from '../../infra/stop-notices';
import type { ExecutionRecord } from '../../db/execution-store';
import { Conflict, InvalidInput, NotFound, Unavailable } from '../../domain/errors';
import { isAdmin } from '../../domain/permissions';
import type { ClientEvent } from '../../domain/stream-events';
import { isUuid } from '../../infra/ids';
import { RELAY_START } from '../../infra/relay';
import { principalOf } from '../auth';
import {
  CONTENT_TYPES,
  respondWithExecution,
  serialize,
  type ExecutionResponseDeps,
} from '../execution-response';
import type { RouteRegistry } from '../route-registry';
import { EXECUTION_STREAM_QUERY, executionSchema } from '../schemas/executions';

export type ExecutionRouteDeps = ExecutionResponseDeps & {
  /** DX-3: a cancel stops the execution's model stream at once (infra/stop-notices.ts). */
  stopNotices: StopNotices;
};

export const errorDetail = (r: ExecutionRecord): string =>
  r.status === 'cancelled' ? 'Execution cancelled' : `Execution failed: ${r.error_type ?? 'unknown error'}`;

/**
 * The model activity stores the answer before it publishes `done`; the record's outcome follows a
 * moment later. In between the execution has succeeded already: say so (and refuse to cancel it).
 */
export function settled(r: ExecutionRecord, answer: StoredAnswer | null): ExecutionRecord {
  if (r.status !== 'running' || !answer) return r;
  return {
    ...r,
    status: 'succeeded',
    input_tokens: answer.usage.input_tokens,
    output_tokens: answer.usage.output_tokens,
  };
}

function presentExecution(r: ExecutionRecord, answer: StoredAnswer | null) {
  return {
    id: r.id,
    kind: r.kind,
    status: r.status,
    agent_id: r.agent_id,
    agent_version: r.agent_version,
    pipeline_id: r.pipeline_id,
    llm_id: r.llm_id,
    parent_execution_id: r.parent_execution_id,
    trace_id: r.trace_id,
    attempts: r.attempts,
    usage:
      r.input_tokens === null || r.output_tokens === null
        ? null
        : { input_tokens: r.input_tokens, output_tokens: r.output_tokens },
    started_at: r.started_at.toISOString(),
    finished_at: r.finished_at?.toISOString() ?? null,
    ...(r.status === 'failed' || r.status === 'cancelled'
      ? {
          error: {
            status: r.error_status ?? 503,
            type: r.error_type ?? 'Infra.Unknown',
            detail: errorDetail(r),
          },
        }
      : {}),
    ...(answer ? { answer: answer.text } : {}),
    ...(answer?.incomplete_details ? { incomplete_details: answer.incomplete_details } : {}),
  };
}

function nonNegativeInt(value: string, name: string): number {
  if (!/^\d{1,15}$/.test(value)) throw new InvalidInput(`${name} must be a non-negative integer (a seq)`);
  return Number(value);
}

/** DX-2: `?format=` over `Accept`; NDJSON unless SSE is asked for. */
function streamFormat(req: Request): 'ndjson' | 'sse' {
  const format = req.query.format;
  if (format !== undefined) {
    if (format === 'ndjson' || format === 'sse') return format;
    throw new InvalidInput('format must be ndjson or sse');
  }
  return (req.header('accept') ?? '').includes('text/event-stream') ? 'sse' : 'ndjson';
}

/** DX-2: resume after `?after=` or `Last-Event-ID`; a reconnecting EventSource sends the newer one. */
function resumeAfter(req: Request): number {
  const query = req.query.after;
  if (query !== undefined && typeof query !== 'string')
    throw new InvalidInput('after must be a single value');
  const header = req.header('last-event-id');
  return Math.max(
    query === undefined ? 0 : nonNegativeInt(query, 'after'),
    header === undefined || header === '' ? 0 : nonNegativeInt(header, 'Last-Event-ID'),
  );
}

/**
 * The events of a finished execution whose relay stream is gone (expired after 1 h, or lost by
 * Redis), rebuilt from its record and stored answer: the whole answer in one delta, then the
 * terminal event. Numbered after what the client has, with a `reset` first when it has
 * something, so the text it ends with is the answer.
 */
export function archivedEvents(
  r: ExecutionRecord,
  answer: StoredAnswer | null,
  after: number,
): ClientEvent[] {
  let seq = after;
  if (r.status !== 'succeeded')
    return [{ type: 'error', seq: ++seq, status: r.error_status ?? 503, detail: errorDetail(r) }];
  if (!answer)
    return [{ type: 'error', seq: ++seq, status: 410, detail: 'The answer is no longer retained' }];
  const attempt = Math.max(r.attempts, 1);
  const events: ClientEvent[] = [];
  if (after > 0) events.push({ type: 'reset', seq: ++seq, attempt });
  if (answer.text !== '') events.push({ type: 'delta', seq: ++seq, attempt, text: answer.text });
  const incomplete = answer.incomplete_details;
  events.push({
    type: 'done',
    seq: ++seq,
    attempt,
    usage: answer.usage,
    ...(incomplete ? { incomplete_details: incomplete } : {}),
  });
  return events;
}

/**
 * The execution `req.params.id` names, for the key that started it or an admin; for anyone else,
 * as for an unknown id, a 404 naming it as a `label` ("Execution", "Response").
 */
export async function findVisibleExecution(
  deps: Pick<ExecutionRouteDeps, 'executions'>,
  req: Request,
  label: string,
): Promise<ExecutionRecord> {
  const id = String(req.params.id);
  const principal = principalOf(req);
  const record = isUuid(id) ? await deps.executions.get(id.toLowerCase()) : null;
  if (!record || (record.api_key_id !== principal.keyId && !isAdmin(principal)))
    throw new NotFound(`${label} with id ${id} not found`);
  return record;
}

/**
 * DX-3: asks Temporal to cancel a running execution's workflow (and so its children and the model
 * request). A workflow that closed meanwhile is a 409 (`notRunning` words it for the record as it
 * is now).
 */
export async function cancelExecution(
  deps: Pick<ExecutionRouteDeps, 'executions' | 'temporal' | 'stopNotices'>,
  record: ExecutionRecord,
  notRunning: (now: ExecutionRecord) => Error,
): Promise<void> {
  try {
    await deps.temporal.workflow.getHandle(record.workflow_id).cancel();
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError))
      throw new Unavailable('Could not cancel the execution: Temporal is unavailable');
    const now = (await deps.executions.get(record.id)) ?? record;
    if (now.status !== 'running') throw notRunning(now);
    throw new Conflict(`Execution ${record.id} is not running: its workflow has closed`);
  }
  // The cancellation is recorded: the model stream stops now, not when the workflow's task comes
  // round (behind every other execution's on a busy worker). The workflow sends the same notice,
  // which covers a cancel from elsewhere (the Temporal UI, a parent); a lost one falls back to it.
  await deps.stopNotices.send(record.id).catch(() => undefined);
}

export function executionRoutes(routes: RouteRegistry, deps: ExecutionRouteDeps): Router {
  const router = Router();

  const visible = (req: Request): Promise<ExecutionRecord> => findVisibleExecution(deps, req, 'Execution');
  const answerOf = (r: ExecutionRecord) => deps.executions.getAnswer<StoredAnswer>(r.id);

  routes.add(
    router,
    {
      method: 'get',
      path: '/executions/:id',
      summary: 'An execution: status, ids, usage, and the answer while its content is retained',
      tag: 'Executions',
      permission: 'the key that started it, or admin',
      success: { status: 200, description: 'The execution', schema: executionSchema },
      errors: [401, 404],
    },
    async (req, res) => {
      const record = await visible(req);
      const answer = await answerOf(record);
      res.json(presentExecution(settled(record, answer), answer));
    },
  );

  routes.add(
    router,
    {
      method: 'get',
      path: '/executions/:id/stream',
      summary: 'Re-attach to a running or finished execution: its events from the start or after a seq',
      tag: 'Executions',
      permission: 'the key that started it, or admin',
      query: EXECUTION_STREAM_QUERY,
      success: {
        status: 200,
        description: 'The events (NDJSON, or SSE with Accept: text/event-stream or format=sse)',
        contentTypes: ['application/x-ndjson', 'text/event-stream'],
      },
      errors: [400, 401, 404, 502, 503],
    },
    async (req, res) => {
      const record = await visible(req);
      const format = streamFormat(req);
      const after = resumeAfter(req);
      const relayGone =
        record.status !== 'running' && (await deps.relay.read(record.id, RELAY_START)).length === 0;
      if (!relayGone) return respondWithExecution(deps, req, res, record.id, format, undefined, after);
      const events = archivedEvents(record, await answerOf(record), after);
      res.status(200).set({
        'x-agentry-execution-id': record.id,
        'Content-Type': CONTENT_TYPES[format],
        'Cache-Control': 'no-cache',
      });
      res.end(events.map((e) => serialize(format, e)).join(''));
    },
  );

  routes.add(
    router,
    {
      method: 'delete',
      path: '/executions/:id',
      summary: 'Cancel a running execution: its stream ends with an error event of status 499',
      tag: 'Executions',
      permission: 'the key that started it, or admin',
      success: {
        status: 202,
        description: 'Cancellation requested; the execution as it is now',
        schema: executionSchema,
      },
      errors: [401, 404, 409, 503],
    },
    async (req, res: Response) => {
      const stored = await visible(req);
      const record = stored.status === 'running' ? settled(stored, await answerOf(stored)) : stored;
      const notRunning = (r: ExecutionRecord) =>
        new Conflict(`Execution ${r.id} is not running: it is ${r.status}`);
      if (record.status !== 'running') throw notRunning(record);
      await cancelExecution(deps, record, notRunning);
      res.status(202).json(presentExecution((await deps.executions.get(record.id)) ?? record, null));
    },
  );

  return router;
}
