// POST /agents/{id}/execute (SPEC §9), the retrieval dry run POST /agents/{id}/search (§10) and
// GET /tracing/{id} (§11). Every check of §9.2 runs, in its order, before a workflow starts.
import { Router, type Request } from 'express';
import { retrieveForPlaceholder, isRetrieval } from '../../services/retrieval';
import { embedWith, QueryEmbeddings } from '../../services/query-embeddings';
import type { Agent } from '../../db/agent-store';
import { InvalidInput, NotFound } from '../../domain/errors';
import type { Principal } from '../../domain/permissions';
import { isUuid } from '../../infra/ids';
import { withEmbeddingFailure } from '../embedding-failure';
import { loadAuthorized } from '../access';
import {
  checkAgentRequest,
  inOrder,
  startAgentExecution,
  type AgentExecutionDeps,
} from '../agent-execution-start';
import { principalOf } from '../auth';
import { formatOf, respondWithExecution } from '../execution-response';
import { IDEMPOTENCY_HEADER_SPEC } from '../idempotency';
import type { RouteRegistry } from '../route-registry';
import { executeAgentSchema, type ExecuteAgentBody } from '../schemas/agents';
import { fragmentSchema } from '../schemas/knowledge';
import { validate } from '../validation';

export type { AgentExecutionDeps };

function headerId(req: Request, name: string): string {
  const value = req.header(name);
  if (!value) throw new InvalidInput(`Missing header ${name}`);
  if (!isUuid(value)) throw new InvalidInput(`Header ${name} is not a valid id: ${value}`);
  return value.toLowerCase();
}

/** §9.2 steps 4–6 against the agent and pipeline: the body, then EX-1, values, filters, classifications. */
function checkRequest(agent: Agent, body: unknown, closure: Record<string, string[]>, filterDepth: number) {
  const request = validate<ExecuteAgentBody>(executeAgentSchema, body);
  return { body: request, content: checkAgentRequest(agent, request, closure, filterDepth) };
}

export function agentExecutionRoutes(routes: RouteRegistry, deps: AgentExecutionDeps): Router {
  const router = Router();
  const agentFor = (req: Request, principal: Principal) =>
    loadAuthorized(principal, 'execute', 'agents', 'Agent', req.params.id, (id) => deps.agents.getCached(id));
  const pipelineFor = (req: Request, principal: Principal) =>
    loadAuthorized(principal, 'execute', 'pipelines', 'Pipeline', headerId(req, 'x-pipeline-id'), (id) =>
      deps.pipelines.getCached(id),
    );

  routes.add(
    router,
    {
      method: 'post',
      path: '/agents/:id/execute',
      summary: 'Execute an agent against a pipeline (x-pipeline-id) and an LLM (x-llm-id)',
      tag: 'Agents',
      permission: 'execute:agents, execute:pipelines, execute:llms',
      body: executeAgentSchema,
      deferBodyValidation: true,
      headers: [IDEMPOTENCY_HEADER_SPEC],
      success: {
        status: 200,
        description: 'The answer (NDJSON by default, SSE, or plain text)',
        contentTypes: ['application/x-ndjson', 'text/event-stream', 'text/plain'],
      },
      errors: [400, 401, 403, 404, 502, 503],
    },
    async (req, res) => {
      const principal = principalOf(req);
      // The three lookups at once (one round trip's wait); a failure is reported in this order.
      const [agent, pipeline, llm] = await inOrder([
        () => agentFor(req, principal),
        () => pipelineFor(req, principal),
        () =>
          loadAuthorized(principal, 'execute', 'llms', 'LLM', headerId(req, 'x-llm-id'), (id) =>
            deps.llms.getCached(id),
          ),
      ]);
      const { body, content } = checkRequest(agent, req.body, pipeline.closure, deps.limits.filterDepth);
      // DX-4: a repeat of the same request under the same Idempotency-Key attaches to its execution.
      const started = await startAgentExecution(
        deps,
        req,
        principal,
        { agent, pipeline, llm },
        { content, tracing: body.tracing === true, temperature: body.temperature },
        [req.body, pipeline.id, llm.id],
      );
      await respondWithExecution(deps, req, res, started.executionId, formatOf(body.stream), started.trace);
    },
  );

  routes.add(
    router,
    {
      method: 'post',
      path: '/agents/:id/search',
      summary: 'Retrieval dry run: the fragments each retrieval placeholder would insert (no model call)',
      tag: 'Agents',
      permission: 'execute:agents, execute:pipelines',
      body: executeAgentSchema,
      deferBodyValidation: true,
      success: {
        status: 200,
        description: '{"<placeholder>": [fragment...]}',
        schema: { type: 'object', additionalProperties: { type: 'array', items: fragmentSchema } },
      },
      errors: [400, 401, 403, 404, 502],
    },
    async (req, res) => {
      const principal = principalOf(req);
      const agent = await agentFor(req, principal);
      const pipeline = await pipelineFor(req, principal);
      const { content } = checkRequest(agent, req.body, pipeline.closure, deps.limits.filterDepth);
      const model = await deps.embeddingModels.get(pipeline.embedding_model_id);
      if (!model) throw new NotFound(`Embedding model of pipeline ${pipeline.id} not found`);
      const result: Record<string, unknown[]> = {};
      // As in an execution, identical search texts are embedded once (EX-2).
      const search = { ...deps, embedQuery: new QueryEmbeddings(embedWith(deps)).forExecution('dry-run') };
      await withEmbeddingFailure(model, async () => {
        for (const placeholder of agent.placeholders.filter(isRetrieval))
          result[placeholder.name] = await retrieveForPlaceholder(
            search,
            pipeline,
            model,
            placeholder,
            content,
          );
      });
      res.json(result);
    },
  );

  routes.add(
    router,
    {
      method: 'get',
      path: '/tracing/:id',
      summary: 'The trace of an execution (only for the key that ran it, for 60 minutes)',
      tag: 'Agents',
      success: { status: 200, description: '{traces, prompt, inputs}' },
      errors: [401, 404],
    },
    async (req, res) => {
      const id = String(req.params.id);
      const trace = isUuid(id) ? await deps.traces.get(id.toLowerCase(), principalOf(req).keyId) : null;
      if (!trace) throw new NotFound(`Trace with id ${id} not found`);
      res.json(trace);
    },
  );
  return router;
}
