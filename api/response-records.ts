// A response as its execution's record and content say it is now (issues 28, 34): who may see it,
// its response object, and a cancel that waits for the workflow's outcome. Shared by the routes of
// /v1/responses/{id} (GET, cancel, DELETE, input_items).
import type { Request } from 'express';
import type { Response as OpenAiResponse } from 'openai/resources/responses/responses';
import type { ExecutionRecord } from '../db/execution-store';
import { Conflict, NotFound } from '../domain/errors';
import { isAdmin, type Principal } from '../domain/permissions';
import { isUuid } from '../infra/ids';
import { RELAY_START } from '../infra/relay';
import { principalOf } from './auth';
import { isResponse, type StoredRequest, type StoredResponse } from './responses-conversation';
import {
  echoOf,
  answeredState,
  responseObject,
  viewOf,
  type ResponseStatus,
  type ResponseView,
} from './responses-objects';
import type { StoredAnswer } from '../services/answers';
import { cancelExecution, errorDetail, settled, type ExecutionRouteDeps } from './routes/executions';

const CANCEL_WAIT_MS = 10_000;

export const STATUS: Record<ExecutionRecord['status'], ResponseStatus> = {
  running: 'in_progress',
  succeeded: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
};

const seconds = (date: Date): number => Math.floor(date.getTime() / 1000);

/**
 * The response `req.params.id` names with its content, in one read: for the key that started it
 * or an admin; for anyone else, as for an unknown id, a deleted one or a `store: false` one that
 * finished, a 404.
 */
export function visibleResponse(
  deps: Pick<ExecutionRouteDeps, 'executions'>,
  req: Request,
): Promise<StoredResponse> {
  return responseFor(deps, principalOf(req), String(req.params.id));
}

/**
 * `visibleResponse` of an id. `whileRetained`: a `store: false` response that finished is visible
 * while its content is retained (a minute): a WebSocket that dropped mid-answer resumes it even
 * when the answer ended meanwhile (docs/decisions.md, "The WebSocket mode").
 */
export async function responseFor(
  deps: Pick<ExecutionRouteDeps, 'executions'>,
  principal: Principal,
  id: string,
  { whileRetained = false }: { whileRetained?: boolean } = {},
): Promise<StoredResponse> {
  const stored = isUuid(id)
    ? await deps.executions.content<StoredRequest, StoredAnswer>(id.toLowerCase())
    : null;
  const r = stored?.record;
  const hidden =
    !r ||
    !isResponse(r) ||
    (r.api_key_id !== principal.keyId && !isAdmin(principal)) ||
    r.deleted_at !== null ||
    (!r.store && r.status !== 'running' && !(whileRetained && stored!.request));
  if (hidden) throw new NotFound(`Response with id ${id} not found`);
  return stored!;
}

/** A finished response whose relay log is gone (SPEC §9.6): its events are rebuilt from the record. */
export const relayGone = async (
  deps: Pick<ExecutionRouteDeps, 'relay'>,
  record: ExecutionRecord,
): Promise<boolean> =>
  record.status !== 'running' && (await deps.relay.read(record.id, RELAY_START)).length === 0;

/** The view a response's events and objects are made from: ids and the stored request's echo. */
export const viewOfStored = (stored: StoredResponse): ResponseView =>
  viewOf(stored.record, echoOf(stored.request?.responses));

/** The response object of an execution as its record and stored answer say it is now. */
export async function present(
  deps: Pick<ExecutionRouteDeps, 'executions'>,
  stored: StoredResponse,
): Promise<OpenAiResponse> {
  const { answer } = stored;
  const r = settled(stored.record, answer);
  const view = viewOfStored(stored);
  const usage =
    r.input_tokens === null || r.output_tokens === null
      ? null
      : { input_tokens: r.input_tokens, output_tokens: r.output_tokens };
  return responseObject(view, {
    status: STATUS[r.status],
    ...(r.status === 'succeeded' && answer ? answeredState(view, answer) : {}),
    usage,
    error: r.status === 'failed' ? { status: r.error_status ?? 503, message: errorDetail(r) } : null,
    // An answer stored before the record says finished (the outcome is written just after):
    // completed then, as the answer's row says.
    completedAt:
      r.status !== 'succeeded'
        ? null
        : seconds(r.finished_at ?? (await deps.executions.answerStoredAt(r.id)) ?? new Date()),
  });
}

/** The response again, read after a change (a cancel). */
export async function presentAgain(
  deps: Pick<ExecutionRouteDeps, 'executions'>,
  stored: StoredResponse,
): Promise<OpenAiResponse> {
  const now = await deps.executions.content<StoredRequest, StoredAnswer>(stored.record.id);
  return present(deps, now ?? stored);
}

/**
 * DX-3 on a running response, then a wait (at most 10 s) for its workflow to close: the workflow
 * records its outcome before it closes. `notRunning` words the 409 of one that ended meanwhile.
 */
export async function cancelAndWait(
  deps: Pick<ExecutionRouteDeps, 'executions' | 'temporal' | 'stopNotices'>,
  record: ExecutionRecord,
  notRunning: (now: ExecutionRecord) => Error,
): Promise<void> {
  await cancelExecution(deps, record, notRunning);
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    deps.temporal.workflow
      .getHandle(record.workflow_id)
      .result()
      .catch(() => undefined),
    new Promise((resolve) => (timer = setTimeout(resolve, CANCEL_WAIT_MS))),
  ]);
  clearTimeout(timer);
}

export const cannotCancel = (r: ExecutionRecord): Conflict =>
  new Conflict(`Response ${r.id} cannot be cancelled: it is ${STATUS[r.status]}`);
