// The OpenAI Responses API's own protocol over executions (issues 28, 34, SPEC §19), so that any
// OpenAI SDK is an Agentry client: POST /v1/responses (the LLM `model` answers `input` as a durable
// direct query; with `prompt` an agent runs on the pipeline `metadata` names; streamed, whole, or
// in the background), GET /v1/responses/{id} (its events with `stream=true&starting_after=N`),
// POST /v1/responses/{id}/cancel, DELETE /v1/responses/{id}; input items and compaction in their
// own files. A response is an execution, and its id is the execution's.
import express, { Router, type Response } from 'express';
import type { StoredAnswer } from '../../services/answers';
import type { ExecutionRecord } from '../../db/execution-store';
import { Conflict } from '../../domain/errors';
import type { ExecutionResult } from '../../workflows/contracts';
import type { AgentExecutionDeps } from '../agent-execution-start';
import { principalOf } from '../auth';
import { executionOutcome, type TraceHeader } from '../execution-response';
import { EXECUTION_ID_HEADER, sendOpenAiError } from '../openai-errors';
import {
  cancelAndWait,
  cannotCancel,
  present,
  presentAgain,
  relayGone,
  viewOfStored,
  visibleResponse,
} from '../response-records';
import type { StoredRequest } from '../responses-conversation';
import { startResponse } from '../responses-create';
import { answeredState, responseObject, type ResponseView } from '../responses-objects';
import { streamQuery } from '../responses-request';
import { sendArchivedResponse, streamResponse } from '../responses-stream';
import type { RouteRegistry } from '../route-registry';
import { deletedResponseSchema, responseObjectSchema } from '../schemas/response-objects';
import {
  createResponseSchema,
  RESPONSES_IDEMPOTENCY_HEADER,
  RETRIEVE_RESPONSE_QUERY,
  type ResponsesCreateBody,
} from '../schemas/responses';
import { archivedEvents, settled, type ExecutionRouteDeps } from './executions';
import { responseCompactionRoutes } from './response-compaction';
import { openAiRoute } from './openai-route';
import { responseItemRoutes } from './response-items';

export type ResponsesDeps = AgentExecutionDeps &
  Pick<ExecutionRouteDeps, 'stopNotices'> & { bodyLimitBytes: number };

const TRACE_HEADER = 'x-foundation4ai-tracing-id';

export function responseRoutes(routes: RouteRegistry, deps: ResponsesDeps): Router {
  const router = Router();
  // Before `/v1/responses/:id`, whose `compact` it would take for an id.
  router.use(responseCompactionRoutes(routes, deps));

  routes.add(
    router,
    openAiRoute({
      method: 'post',
      path: '/v1/responses',
      summary:
        'Answer input with an LLM (model), or run an agent (prompt.id) on a pipeline (metadata.pipeline): streamed, whole, or in the background',
      permission: 'execute:llms; with prompt also execute:agents, execute:pipelines',
      body: createResponseSchema,
      headers: [RESPONSES_IDEMPOTENCY_HEADER],
      success: {
        status: 200,
        description: 'The response object, or with stream: true its events (server-sent events)',
        schema: responseObjectSchema,
        contentTypes: ['application/json', 'text/event-stream'],
      },
      errors: [400, 401, 403, 404, 409, 502, 503],
    }),
    async (req, res) => {
      const principal = principalOf(req);
      const body = req.body as ResponsesCreateBody;
      const started = await startResponse(deps, { req }, principal, body);
      const { view, trace } = started;
      if (body.stream) return streamResponse(deps, req, res, view, { hold: !body.background, trace });
      res.set(EXECUTION_ID_HEADER, view.id);
      if (body.background) {
        const stored = started.replayed
          ? await deps.executions.content<StoredRequest, StoredAnswer>(view.id)
          : null;
        res.json(stored ? await present(deps, stored) : responseObject(view, { status: 'queued' }));
        return;
      }
      await answerWhenDone(view, trace, res);
    },
  );

  /** A create without stream or background: the completed response, or the failure's status. */
  async function answerWhenDone(
    view: ResponseView,
    trace: TraceHeader | undefined,
    res: Response,
  ): Promise<void> {
    let result: ExecutionResult;
    try {
      result = await executionOutcome<ExecutionResult>(deps, view.id);
    } catch (err) {
      if (trace && (await trace.stored())) res.set(TRACE_HEADER, trace.traceId);
      throw err;
    }
    const answer = await deps.executions.getPayload<StoredAnswer>(result.answerPayloadId);
    if (!answer) return sendOpenAiError(res, 410, 'The answer is no longer retained');
    if (trace) res.set(TRACE_HEADER, trace.traceId);
    res.json(
      responseObject(view, {
        ...answeredState(view, answer),
        usage: result.usage,
        completedAt: Math.floor(Date.now() / 1000),
      }),
    );
  }

  // The Go SDK's resume sends its JSON body without a content type (`GetStreaming`).
  router.get(
    '/v1/responses/:id',
    express.json({ type: () => true, limit: deps.bodyLimitBytes, strict: true }),
  );
  routes.add(
    router,
    openAiRoute({
      method: 'get',
      path: '/v1/responses/:id',
      summary: 'A response: status, output, usage, error; with stream=true its events, resumable',
      permission: 'the key that started it, or admin',
      query: RETRIEVE_RESPONSE_QUERY,
      success: {
        status: 200,
        description: 'The response object, or with stream=true its events (server-sent events)',
        schema: responseObjectSchema,
        contentTypes: ['application/json', 'text/event-stream'],
      },
      errors: [400, 401, 404],
    }),
    async (req, res) => {
      const stored = await visibleResponse(deps, req);
      const { stream, startingAfter } = streamQuery(req);
      if (!stream) {
        res.json(await present(deps, stored));
        return;
      }
      const { record } = stored;
      const view = viewOfStored(stored);
      if (!(await relayGone(deps, record)))
        return streamResponse(deps, req, res, view, { hold: false, startingAfter });
      sendArchivedResponse(res, view, archivedEvents(record, stored.answer, 0), startingAfter);
    },
  );

  routes.add(
    router,
    openAiRoute({
      method: 'post',
      path: '/v1/responses/:id/cancel',
      summary: 'Cancel a response (DX-3): the model request is aborted; answers the cancelled response',
      permission: 'the key that started it, or admin',
      success: { status: 200, description: 'The response, cancelled', schema: responseObjectSchema },
      errors: [401, 404, 409, 503],
    }),
    async (req, res) => {
      const stored = await visibleResponse(deps, req);
      const record = settled(stored.record, stored.answer);
      // Cancelling twice answers the cancelled response again, as OpenAI's API does.
      if (record.status !== 'running' && record.status !== 'cancelled') throw cannotCancel(record);
      if (record.status === 'running') await cancelAndWait(deps, record, cannotCancel);
      res.json(await presentAgain(deps, stored));
    },
  );

  routes.add(
    router,
    openAiRoute({
      method: 'delete',
      path: '/v1/responses/:id',
      summary:
        'Delete a response: a running one is cancelled first (DX-3); its content goes, the record stays for audit',
      permission: 'the key that started it, or admin',
      success: { status: 200, description: 'The deletion', schema: deletedResponseSchema },
      errors: [401, 404, 503],
    }),
    async (req, res) => {
      const stored = await visibleResponse(deps, req);
      const record = settled(stored.record, stored.answer);
      // One that ended meanwhile is deleted as it is.
      const ended = (r: ExecutionRecord) => new Conflict(`Response ${r.id} ended`);
      if (record.status === 'running')
        await cancelAndWait(deps, record, ended).catch((err: unknown) => {
          if (!(err instanceof Conflict)) throw err;
        });
      await deps.executions.deleteContent(record.id);
      await deps.relay.delete(record.id);
      res.json({ id: record.id, object: 'response.deleted', deleted: true });
    },
  );

  router.use(responseItemRoutes(routes, deps));
  return router;
}
