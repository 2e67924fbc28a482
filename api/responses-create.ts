// Starting a /v1/responses create (SPEC OR-1, OR-3): with `prompt` an agent's execution (§9.2's
// checks and start, the conversation after its rendered messages); without, the registered LLM
// `model` names answers the request as a durable direct query: the `llmQuery` workflow, record,
// retries, relay, Idempotency-Key and cancel of POST /llms/{id}/query, with the whole request in its
// encrypted request payload. Either way the workflow's input carries ids only. HTTP's create and a
// WebSocket's `response.create` turn (api/responses-socket.ts) are this one function.
import type { Request } from 'express';
import { InvalidInput } from '../domain/errors';
import { chatMessagesOf, MODEL_PARAMETERS, type ResponsesModelRequest } from '../domain/llm-request';
import type { Principal } from '../domain/permissions';
import { checkToolOutputs, inputItems, type ResponseItem } from '../domain/response-items';
import { newId } from '../infra/ids';
import type { ModelRequestContent } from '../services/answers';
import type { LlmQueryInput } from '../workflows/contracts';
import { checkAgentRequest, startAgentExecution, type AgentExecutionDeps } from './agent-execution-start';
import type { TraceHeader } from './execution-response';
import { withIdempotency } from './idempotency';
import { contextOf } from './responses-conversation';
import { createdAtOf, echoOf, type ResponseView } from './responses-objects';
import { executeRequestOf, llmOf, RESPONSES_FIELDS, targetOf } from './responses-request';
import {
  agentRequestSchema,
  plainRequestSchema,
  type CreateResponseBody,
  type ResponsesCreateBody,
} from './schemas/responses';
import { startExecution, type ExecutionIds } from './start-execution';
import { validate } from './validation';

export interface StartedResponse {
  view: ResponseView;
  /** DX-4: a repeat of an earlier create under its Idempotency-Key. */
  replayed: boolean;
  trace?: TraceHeader;
  /** What the model is given: the context `previous_response_id` brought, then this create's input. */
  items: ResponseItem[];
}

/**
 * A WebSocket's conversation of its last response (SPEC OR-5): the items `previous_response_id`
 * continues when it names that response, else undefined (the database is asked, which never
 * continues a `store: false` response).
 */
export type CachedConversation = (responseId: string) => ResponseItem[] | undefined;

/** What starts a create: an HTTP request (its Idempotency-Key), or a WebSocket turn (null). */
interface CreateOrigin {
  req: Request | null;
  cached?: CachedConversation | undefined;
}

/** What a create stores besides its items: the model's parameters and Agentry's own. */
const PARAMETERS = [...MODEL_PARAMETERS, 'metadata', 'previous_response_id'] as const;

/** An agent's model call takes its rendered messages, the conversation and temperature only. */
const NOT_FOR_AGENTS = MODEL_PARAMETERS.filter((p) => p !== 'temperature');

const unsupported = (field: string, message: string): InvalidInput =>
  new InvalidInput(message, [{ type: 'unsupported_parameter', path: field, message }]);

/** The rules between fields that the schema cannot say; which kind of create the body is. */
function checkCreate(body: ResponsesCreateBody): body is CreateResponseBody {
  if (body.conversation != null)
    throw unsupported(
      'conversation',
      'conversation is not supported: continue a response with previous_response_id',
    );
  if (body.background === true && body.store === false)
    throw unsupported('store', 'background: true needs store: true (a background response is read later)');
  if (body.prompt == null) {
    validate(plainRequestSchema, body);
    if (body.input === undefined && body.previous_response_id == null) {
      const message = 'Missing required field: input (or previous_response_id)';
      throw new InvalidInput(message, [{ type: 'required', path: 'input', message }]);
    }
    return false;
  }
  validate(agentRequestSchema, body);
  const given = NOT_FOR_AGENTS.find((field) => body[field] != null);
  if (given)
    throw unsupported(
      given,
      `${given} cannot be given with prompt: an agent's model call takes its rendered messages, ` +
        'the conversation (input, previous_response_id) and temperature',
    );
  return true;
}

/** Starts a create of either kind: an agent's with `prompt`, else a plain one. */
export async function startResponse(
  deps: AgentExecutionDeps,
  origin: CreateOrigin,
  principal: Principal,
  body: ResponsesCreateBody,
): Promise<StartedResponse> {
  return checkCreate(body)
    ? startAgentResponse(deps, origin, principal, body)
    : startPlainResponse(deps, origin, principal, body);
}

/** The turns before this create (a `previous_response_id`'s) and its own input items, checked. */
async function conversationOf(
  deps: Pick<AgentExecutionDeps, 'executions'>,
  principal: Principal,
  body: ResponsesCreateBody,
  cached: CachedConversation | undefined,
): Promise<{ context: ResponseItem[]; input: ResponseItem[] }> {
  const previous = body.previous_response_id;
  const context =
    previous == null ? [] : (cached?.(previous) ?? (await contextOf(deps, principal, previous)));
  const input = inputItems(body.input, context, newId);
  checkToolOutputs(context, input);
  return { context, input };
}

/** The create as its execution stores it: its items and every parameter given (nulls dropped). */
function modelRequestOf(
  body: ResponsesCreateBody,
  conversation: { context: ResponseItem[]; input: ResponseItem[] },
): ResponsesModelRequest {
  const given = PARAMETERS.filter((field) => body[field] != null);
  return {
    ...conversation,
    ...(Object.fromEntries(given.map((field) => [field, body[field]])) as Partial<ResponsesModelRequest>),
    store: body.store !== false,
    background: body.background === true,
  };
}

/** A create without `prompt`: the LLM `model` names, as today's direct query (LLM-4). */
async function startPlainResponse(
  deps: AgentExecutionDeps,
  { req, cached }: CreateOrigin,
  principal: Principal,
  body: ResponsesCreateBody,
): Promise<StartedResponse> {
  const llm = await llmOf(deps, principal, body.model);
  const request = modelRequestOf(body, await conversationOf(deps, principal, body, cached));
  // `messages` for the model call that takes messages only (domain/llm-request.ts, toProviderRequest).
  const content: ModelRequestContent = {
    messages: chatMessagesOf([...request.context, ...request.input], request.instructions),
    responses: request,
  };
  const start = (ids: ExecutionIds) =>
    startExecution<LlmQueryInput>(
      deps,
      {
        record: { kind: 'llm_query', api_key_id: principal.keyId, llm_id: llm.id, store: request.store },
        content,
        workflowType: 'llmQuery',
        args: ({ executionId, requestPayloadId, profiles }) => ({
          executionId,
          llmId: llm.id,
          requestPayloadId,
          profiles,
          ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
        }),
        searchAttributes: { LlmId: llm.id, ApiKeyId: principal.keyId },
        names: { llm: llm.name },
      },
      ids,
    );
  const { executionId, replayed } = await withIdempotency(deps, req, `llm:${llm.id}`, [body, llm.id], start);
  const view: ResponseView = {
    id: executionId,
    createdAt: createdAtOf(executionId),
    model: llm.id,
    agentId: null,
    agentVersion: null,
    pipelineId: null,
    traceId: null,
    echo: echoOf(request),
  };
  return { view, replayed, items: [...request.context, ...request.input] };
}

/** A create with `prompt`: §9.2 in its order, then the conversation, then the agent's start. */
async function startAgentResponse(
  deps: AgentExecutionDeps,
  { req, cached }: CreateOrigin,
  principal: Principal,
  body: CreateResponseBody,
): Promise<StartedResponse> {
  const { agent, pipeline, llm } = await targetOf(deps, principal, body);
  const request = executeRequestOf(body);
  const checked = checkAgentRequest(
    agent,
    request,
    pipeline.closure,
    deps.limits.filterDepth,
    RESPONSES_FIELDS,
  );
  const { context, input, temperature, store, background, previous_response_id } = modelRequestOf(
    body,
    await conversationOf(deps, principal, body, cached),
  );
  const responses = {
    context,
    input,
    store,
    background,
    ...(temperature !== undefined ? { temperature } : {}),
    ...(previous_response_id !== undefined ? { previous_response_id } : {}),
  };
  const started = await startAgentExecution(
    deps,
    req,
    principal,
    { agent, pipeline, llm },
    { content: { ...checked, responses }, tracing: body.metadata.tracing === 'true', temperature, store },
    [body, pipeline.id, llm.id],
  );
  const view: ResponseView = {
    id: started.executionId,
    createdAt: createdAtOf(started.executionId),
    model: llm.id,
    agentId: agent.id,
    agentVersion: agent.version,
    pipelineId: pipeline.id,
    traceId: started.trace?.traceId ?? null,
    echo: echoOf(responses),
  };
  return {
    view,
    replayed: started.replayed,
    ...(started.trace ? { trace: started.trace } : {}),
    items: [...context, ...input],
  };
}
