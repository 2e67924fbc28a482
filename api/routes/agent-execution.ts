// POST /agents/{id}/execute (SPEC §9), the retrieval dry run POST /agents/{id}/search (§10) and
// GET /tracing/{id} (§11). Every check of §9.2 runs, in its order, before a workflow starts.
import { Router, type Request } from 'express';
import { randomUUID } from 'node:crypto';
import type { AgentStore } from '../../db/agent-store';
import type { LlmStore } from '../../db/llm-store';
import type { PipelineStore } from '../../db/pipeline-store';
import type { Agent } from '../../db/agent-store';
import {
  isRetrieval,
  retrieveForPlaceholder,
  type AgentRequestContent,
  type FilteredSearchDeps,
} from '../../activities/retrieve-fragments';
import { embedWith, QueryEmbeddings } from '../../activities/query-embeddings';
import { resolveReader } from '../../domain/classifications';
import { InvalidInput, NotFound, type ErrorItem } from '../../domain/errors';
import { withEmbeddingFailure } from '../embedding-failure';
import { compileFilter } from '../../domain/filter-compiler';
import { parseFilter } from '../../domain/filter-parser';
import type { Principal } from '../../domain/permissions';
import { isUuid } from '../../infra/ids';
import type { TraceStore } from '../../infra/trace-store';
import type { AgentExecutionInput } from '../../workflows/contracts';
import type { PlanningDeps } from '../../activities/prompt-planning';
import { loadAuthorized } from '../access';
import { checkAgentReferences } from '../prompt-references';
import { principalOf } from '../auth';
import { formatOf, respondWithExecution, type ExecutionResponseDeps } from '../execution-response';
import { IDEMPOTENCY_HEADER_SPEC, withIdempotency, type IdempotencyDeps } from '../idempotency';
import type { RouteRegistry } from '../route-registry';
import { executeAgentSchema, type ExecuteAgentBody } from '../schemas/agents';
import { fragmentSchema } from '../schemas/knowledge';
import { startExecution, type StartExecutionDeps } from '../start-execution';
import { validate } from '../validation';

export type AgentExecutionDeps = PlanningDeps & {
  agents: AgentStore;
  pipelines: PipelineStore;
  llms: LlmStore;
  traces: TraceStore;
} & FilteredSearchDeps &
  StartExecutionDeps &
  ExecutionResponseDeps &
  IdempotencyDeps;

function headerId(req: Request, name: string): string {
  const value = req.header(name);
  if (!value) throw new InvalidInput(`Missing header ${name}`);
  if (!isUuid(value)) throw new InvalidInput(`Header ${name} is not a valid id: ${value}`);
  return value.toLowerCase();
}

/** §9.2 steps 4–6 against the agent and pipeline: the body, EX-1, values, filters, classifications. */
function checkRequest(
  agent: Agent,
  body: unknown,
  closure: Record<string, string[]>,
  filterDepth: number,
): { body: ExecuteAgentBody; content: AgentRequestContent } {
  const request = validate<ExecuteAgentBody>(executeAgentSchema, body);
  const queries = agent.placeholders.filter((p) => p.type === 'query').map((p) => p.name);
  const missing = queries.filter((name) => !(name in request.prompt));
  if (missing.length > 0) {
    const items: ErrorItem[] = missing.map((name) => ({
      type: 'missing_query_value',
      path: `prompt.${name}`,
      placeholder: name,
      message: 'value required',
    }));
    throw new InvalidInput(`Missing values for query placeholders: ${missing.join(', ')}`, items);
  }
  const extra = Object.keys(request.prompt).filter((name) => !queries.includes(name));
  if (extra.length > 0)
    throw new InvalidInput(
      `Not query placeholders of the agent: ${extra.map((n) => `prompt.${n}`).join(', ')}`,
    );
  const notStrings = queries.filter((name) => typeof request.prompt[name] !== 'string');
  if (notStrings.length > 0)
    throw new InvalidInput(`Values must be strings: ${notStrings.map((n) => `prompt.${n}`).join(', ')}`);
  const retrievalNames = agent.placeholders.filter(isRetrieval).map((p) => p.name);
  const filters = request.filters ?? {};
  for (const [name, filter] of Object.entries(filters)) {
    if (!retrievalNames.includes(name))
      throw new InvalidInput(`filters.${name} is not a retrieval placeholder of the agent`);
    try {
      compileFilter(parseFilter(filter, filterDepth), 'f.metadata');
    } catch (err) {
      throw new InvalidInput(`filters.${name}: ${(err as Error).message}`);
    }
  }
  const classifications = resolveReader(request.classification, closure);
  return {
    body: request,
    content: { values: request.prompt as Record<string, string>, classifications, filters },
  };
}

/** Runs the steps at once; throws the first failure in argument order, not in time order. */
async function inOrder<T extends readonly unknown[]>(steps: {
  [K in keyof T]: () => Promise<T[K]>;
}): Promise<T> {
  // An async wrapper turns a step's synchronous throw (a bad header) into its rejection.
  const settled = await Promise.allSettled(steps.map(async (step) => step()));
  const failed = settled.find((s) => s.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

export function agentExecutionRoutes(routes: RouteRegistry, deps: AgentExecutionDeps): Router {
  const router = Router();
  const agentFor = (req: Request, principal: Principal) =>
    loadAuthorized(principal, 'execute', 'agents', 'Agent', req.params.id, (id) => deps.agents.get(id));
  const pipelineFor = (req: Request, principal: Principal) =>
    loadAuthorized(principal, 'execute', 'pipelines', 'Pipeline', headerId(req, 'x-pipeline-id'), (id) =>
      deps.pipelines.get(id),
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
            deps.llms.get(id),
          ),
      ]);
      const { body, content } = checkRequest(agent, req.body, pipeline.closure, deps.limits.filterDepth);
      // §9.2 / PC-8: every reference resolves for this key before anything starts.
      const templates = agent.prompt.filter((m) => m.include).map((m) => m.template);
      const hasReferences = (await checkAgentReferences(deps, principal, templates, true)).length > 0;
      const traceId = body.tracing ? randomUUID() : undefined;
      const start = () =>
        startExecution<AgentExecutionInput>(deps, {
          record: {
            kind: 'agent',
            api_key_id: principal.keyId,
            agent_id: agent.id,
            agent_version: agent.version,
            pipeline_id: pipeline.id,
            llm_id: llm.id,
            trace_id: traceId ?? null,
          },
          content,
          workflowType: 'agentExecution',
          args: ({ executionId: id, requestPayloadId, profiles }) => ({
            executionId: id,
            agentId: agent.id,
            agentVersion: agent.version,
            pipelineId: pipeline.id,
            llmId: llm.id,
            requestPayloadId,
            retrievalPlaceholders: agent.placeholders.filter(isRetrieval).map((p) => p.name),
            apiKeyId: principal.keyId,
            profiles,
            ...(hasReferences ? { hasReferences } : {}),
            ...(body.temperature !== undefined ? { temperature: body.temperature } : {}),
            ...(traceId ? { traceId } : {}),
          }),
          searchAttributes: {
            AgentId: agent.id,
            PipelineId: pipeline.id,
            LlmId: llm.id,
            ApiKeyId: principal.keyId,
          },
          names: { agent: agent.name, pipeline: pipeline.name, llm: llm.name },
        });
      // DX-4: a repeat of the same request under the same Idempotency-Key attaches to its execution.
      const fingerprint = [req.body, pipeline.id, llm.id];
      const { executionId, replayed } = await withIdempotency(
        deps,
        req,
        `agent:${agent.id}`,
        fingerprint,
        start,
      );
      const tracingId = replayed ? (await deps.executions.get(executionId))?.trace_id : traceId;
      await respondWithExecution(
        deps,
        req,
        res,
        executionId,
        formatOf(body.stream),
        tracingId
          ? {
              traceId: tracingId,
              stored: async () => (await deps.traces.get(tracingId, principal.keyId)) !== null,
            }
          : undefined,
      );
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
