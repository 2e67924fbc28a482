// The OpenAI Responses API's own protocol over agent executions (issue 28), so that any OpenAI SDK
// is an Agentry client: POST /v1/responses (`prompt` is the agent, `model` the LLM, `metadata`
// the pipeline and classification; streamed, whole, or in the background), GET
// /v1/responses/{id} (and its events with `stream=true&starting_after=N`), POST
// /v1/responses/{id}/cancel. A response is an agent execution: the same §9.2 checks, workflow,
// record, trace and search attributes as POST /agents/{id}/execute, and its id is the execution's.
import { Router, type Request, type Response } from 'express';
import type { StoredAnswer } from '../../services/answers';
import type { ExecutionRecord } from '../../db/execution-store';
import { Conflict, InvalidInput, NotFound } from '../../domain/errors';
import { RELAY_START } from '../../infra/relay';
import type { ExecutionResult } from '../../workflows/contracts';
import { checkAgentRequest, startAgentExecution, type AgentExecutionDeps } from '../agent-execution-start';
import { principalOf } from '../auth';
import { executionOutcome, type TraceHeader } from '../execution-response';
import { EXECUTION_ID_HEADER, sendOpenAiError } from '../openai-errors';
import {
  answeredState,
  createdAtOf,
  responseObject,
  viewOf,
  type ResponseStatus,
  type ResponseView,
} from '../responses-objects';
import { executeRequestOf, RESPONSES_FIELDS, streamQuery, targetOf } from '../responses-request';
import { sendArchivedResponse, streamResponse } from '../responses-stream';
import type { RouteRegistry, RouteSpec } from '../route-registry';
import {
  createResponseSchema,
  openAiErrorBodySchema,
  responseObjectSchema,
  RESPONSES_IDEMPOTENCY_HEADER,
  RETRIEVE_RESPONSE_QUERY,
  type CreateResponseBody,
} from '../schemas/responses';
import {
  archivedEvents,
  cancelExecution,
  errorDetail,
  findVisibleExecution,
  settled,
  type ExecutionRouteDeps,
} from './executions';

type ResponsesDeps = AgentExecutionDeps & Pick<ExecutionRouteDeps, 'stopNotices'>;

const CANCEL_WAIT_MS = 10_000;
const TRACE_HEADER = 'x-foundation4ai-tracing-id';

const STATUS: Record<ExecutionRecord['status'], ResponseStatus> = {
  running: 'in_progress',
  succeeded: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
};

const seconds = (date: Date): number => Math.floor(date.getTime() / 1000);

const openAiRoute = (spec: Omit<RouteSpec, 'tag' | 'errorBody' | 'bearer'>): RouteSpec => ({
  ...spec,
  tag: 'OpenAI-compatible (Responses API)',
  errorBody: openAiErrorBodySchema,
  bearer: true,
});

export function responseRoutes(routes: RouteRegistry, deps: ResponsesDeps): Router {
  const router = Router();

  /** The response object of an execution as its record and stored answer say it is now. */
  async function present(record: ExecutionRecord) {
    const answer = await deps.executions.getAnswer<StoredAnswer>(record.id);
    const r = settled(record, answer);
    const view = viewOf(r);
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
          : seconds(r.finished_at ?? (await deps.executions.answerStoredAt(record.id)) ?? new Date()),
    });
  }

  const visibleResponse = async (req: Request): Promise<ExecutionRecord> => {
    const record = await findVisibleExecution(deps, req, 'Response');
    // Agent executions only: a direct query or a chain is no response of an agent's prompt.
    if (record.kind !== 'agent') throw new NotFound(`Response with id ${String(req.params.id)} not found`);
    return record;
  };

  routes.add(
    router,
    openAiRoute({
      method: 'post',
      path: '/v1/responses',
      summary:
        'Run an agent (prompt.id) with an LLM (model) on a pipeline (metadata.pipeline): streamed, whole, or in the background',
      permission: 'execute:agents, execute:pipelines, execute:llms',
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
      const body = req.body as CreateResponseBody;
      if (body.store === false)
        throw new InvalidInput(
          'store: false is not supported: every answer is stored for AGENTRY_CONTENT_RETENTION',
        );
      const { agent, pipeline, llm } = await targetOf(deps, principal, body);
      const request = executeRequestOf(body);
      const content = checkAgentRequest(
        agent,
        request,
        pipeline.closure,
        deps.limits.filterDepth,
        RESPONSES_FIELDS,
      );
      const started = await startAgentExecution(
        deps,
        req,
        principal,
        { agent, pipeline, llm },
        { content, tracing: body.metadata.tracing === 'true', temperature: body.temperature },
        [req.body, pipeline.id, llm.id],
      );
      const id = started.executionId;
      const view: ResponseView = {
        id,
        createdAt: createdAtOf(id),
        model: llm.id,
        agentId: agent.id,
        agentVersion: agent.version,
        pipelineId: pipeline.id,
        traceId: started.trace?.traceId ?? null,
      };
      if (body.stream)
        return streamResponse(deps, req, res, view, { hold: !body.background, trace: started.trace });
      res.set(EXECUTION_ID_HEADER, id);
      if (body.background) {
        const answer = started.replayed
          ? await present((await deps.executions.get(id))!)
          : responseObject(view, { status: 'queued' });
        res.json({ ...answer, background: true });
        return;
      }
      await answerWhenDone(view, started.trace, res);
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
      const record = await visibleResponse(req);
      const { stream, startingAfter } = streamQuery(req);
      if (!stream) {
        res.json(await present(record));
        return;
      }
      const view = viewOf(record);
      const relayGone =
        record.status !== 'running' && (await deps.relay.read(record.id, RELAY_START)).length === 0;
      if (!relayGone) return streamResponse(deps, req, res, view, { hold: false, startingAfter });
      const answer = await deps.executions.getAnswer<StoredAnswer>(record.id);
      sendArchivedResponse(res, view, archivedEvents(record, answer, 0), startingAfter);
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
      const stored = await visibleResponse(req);
      const answer =
        stored.status === 'running' ? await deps.executions.getAnswer<StoredAnswer>(stored.id) : null;
      const record = settled(stored, answer);
      const notRunning = (r: ExecutionRecord) =>
        new Conflict(`Response ${r.id} cannot be cancelled: it is ${STATUS[r.status]}`);
      // Cancelling twice answers the cancelled response again, as OpenAI's API does.
      if (record.status !== 'running' && record.status !== 'cancelled') throw notRunning(record);
      if (record.status === 'running') {
        await cancelExecution(deps, record, notRunning);
        // The workflow records its outcome before it closes: wait for that, within reason.
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
      res.json(await present((await deps.executions.get(record.id)) ?? record));
    },
  );

  return router;
}
