// /llms (SPEC §7): the registry and the direct query (LLM-4), the first durable execution.
import { Router } from 'express';
import { LLM_FIELDS, type LlmStore } from '../../db/llm-store';
import { parseListQuery } from '../../domain/list-params';
import { providerFromEndpoint } from '../../domain/llm-request';
import type { Principal } from '../../domain/permissions';
import { newId } from '../../infra/ids';
import type { LlmQueryInput } from '../../workflows/contracts';
import { loadAuthorized, requireCreate } from '../access';
import { principalOf } from '../auth';
import { formatOf, respondWithExecution, type ExecutionResponseDeps } from '../execution-response';
import { presentLlm } from '../presenters';
import type { RouteRegistry } from '../route-registry';
import { LIST_QUERY, listEnvelopeSchema } from '../schemas/common';
import {
  createLlmSchema,
  llmQuerySchema,
  llmSchema,
  updateLlmSchema,
  type CreateLlmBody,
  type LlmQueryBody,
  type UpdateLlmBody,
} from '../schemas/llms';
import { startExecution, type StartExecutionDeps } from '../start-execution';

type LlmRouteDeps = { llms: LlmStore } & StartExecutionDeps & ExecutionResponseDeps;

const STREAM_TYPES = ['application/x-ndjson', 'text/event-stream', 'text/plain'];

export function llmRoutes(routes: RouteRegistry, deps: LlmRouteDeps): Router {
  const router = Router();
  const load = (id: unknown, principal: Principal, action: 'read' | 'write' | 'execute') =>
    loadAuthorized(principal, action, 'llms', 'LLM', id, (llmId) => deps.llms.get(llmId));

  routes.add<CreateLlmBody>(
    router,
    {
      method: 'post',
      path: '/llms',
      summary: 'Register an LLM (an OpenAI Responses API endpoint)',
      tag: 'LLMs',
      permission: 'write:llms',
      body: createLlmSchema,
      success: { status: 201, description: 'The LLM (its api_key is never returned)', schema: llmSchema },
      errors: [400, 401, 403, 409],
    },
    async (req, res) => {
      const principal = principalOf(req);
      requireCreate(principal, 'llms', 'LLM');
      const llm = await deps.llms.create({
        id: newId(),
        name: req.body.name,
        description: req.body.description ?? null,
        endpoint: req.body.endpoint,
        model: req.body.model,
        provider: providerFromEndpoint(req.body.endpoint),
        resumable: req.body.resumable ?? false,
        apiKey: req.body.api_key,
        ownerKeyId: principal.keyId,
      });
      res.status(201).json(presentLlm(llm));
    },
  );

  routes.add(
    router,
    {
      method: 'get',
      path: '/llms',
      summary: 'List the LLMs the caller can read',
      tag: 'LLMs',
      query: LIST_QUERY,
      success: { status: 200, description: 'List envelope', schema: listEnvelopeSchema(llmSchema) },
      errors: [400, 401],
    },
    async (req, res) => {
      const page = await deps.llms.list(principalOf(req), parseListQuery(req.query, LLM_FIELDS));
      res.json({ ...page, data: page.data.map(presentLlm) });
    },
  );

  routes.add(
    router,
    {
      method: 'get',
      path: '/llms/:id',
      summary: 'Get an LLM',
      tag: 'LLMs',
      permission: 'read:llms',
      success: { status: 200, description: 'The LLM', schema: llmSchema },
      errors: [401, 404],
    },
    async (req, res) => {
      res.json(presentLlm(await load(req.params.id, principalOf(req), 'read')));
    },
  );

  routes.add<UpdateLlmBody>(
    router,
    {
      method: 'patch',
      path: '/llms/:id',
      summary: 'Update an LLM (api_key may be replaced, never read)',
      tag: 'LLMs',
      permission: 'write:llms',
      body: updateLlmSchema,
      success: { status: 200, description: 'The updated LLM', schema: llmSchema },
      errors: [400, 401, 403, 404, 409],
    },
    async (req, res) => {
      const llm = await load(req.params.id, principalOf(req), 'write');
      const { api_key, ...fields } = req.body;
      const updated = await deps.llms.update(llm.id, {
        ...fields,
        ...(fields.endpoint !== undefined ? { provider: providerFromEndpoint(fields.endpoint) } : {}),
        ...(api_key !== undefined ? { apiKey: api_key } : {}),
      });
      res.json(presentLlm(updated));
    },
  );

  routes.add(
    router,
    {
      method: 'delete',
      path: '/llms/:id',
      summary: 'Delete an LLM',
      tag: 'LLMs',
      permission: 'write:llms',
      success: { status: 204, description: 'Deleted' },
      errors: [401, 403, 404],
    },
    async (req, res) => {
      const llm = await load(req.params.id, principalOf(req), 'write');
      await deps.llms.delete(llm.id);
      res.status(204).end();
    },
  );

  routes.add<LlmQueryBody>(
    router,
    {
      method: 'post',
      path: '/llms/:id/query',
      summary: 'Query the model directly, streamed as NDJSON (default), SSE, or plain text (stream: false)',
      tag: 'LLMs',
      permission: 'execute:llms',
      body: llmQuerySchema,
      success: {
        status: 200,
        description: 'The answer (see the event protocol)',
        contentTypes: STREAM_TYPES,
      },
      errors: [400, 401, 403, 404, 502, 503],
    },
    async (req, res) => {
      const principal = principalOf(req);
      const llm = await load(req.params.id, principal, 'execute');
      const executionId = await startExecution<LlmQueryInput>(deps, {
        record: { kind: 'llm_query', api_key_id: principal.keyId, llm_id: llm.id },
        content: { messages: req.body.messages },
        workflowType: 'llmQuery',
        args: ({ executionId: id, requestPayloadId, profiles }) => ({
          executionId: id,
          llmId: llm.id,
          requestPayloadId,
          profiles,
          ...(req.body.temperature !== undefined ? { temperature: req.body.temperature } : {}),
        }),
        searchAttributes: { LlmId: llm.id, ApiKeyId: principal.keyId },
        names: { llm: llm.name },
      });
      await respondWithExecution(deps, req, res, executionId, formatOf(req.body.stream));
    },
  );

  return router;
}
