// Starting an agent execution after SPEC §9.2's checks, shared by every route that runs one:
// POST /agents/{id}/execute (and its dry run, which stops before the start) and POST /v1/responses.
// The routes find the agent, pipeline and LLM their own way (path and headers, or body fields) and
// name the request's fields their own way; the checks, the messages and the start are this file's.
import { randomUUID } from 'node:crypto';
import type { Request } from 'express';
import type { Agent, AgentStore } from '../db/agent-store';
import type { Llm, LlmStore } from '../db/llm-store';
import type { Pipeline, PipelineStore } from '../db/pipeline-store';
import { isRetrieval, type AgentRequestContent, type FilteredSearchDeps } from '../services/retrieval';
import type { PlanningDeps } from '../services/prompt-planner';
import { resolveReader } from '../domain/classifications';
import { closestName } from '../domain/closest-name';
import { InvalidInput, type ErrorItem } from '../domain/errors';
import { compileFilter } from '../domain/filter-compiler';
import { parseFilter } from '../domain/filter-parser';
import type { Principal } from '../domain/permissions';
import type { TraceStore } from '../infra/trace-store';
import type { AgentExecutionInput } from '../workflows/contracts';
import type { ExecutionResponseDeps, TraceHeader } from './execution-response';
import { withIdempotency, type IdempotencyDeps } from './idempotency';
import { checkAgentReferences } from './prompt-references';
import type { ExecuteAgentBody } from './schemas/agents';
import { startExecution, type ExecutionIds, type StartExecutionDeps } from './start-execution';

export type AgentExecutionDeps = PlanningDeps & {
  agents: AgentStore;
  pipelines: PipelineStore;
  llms: LlmStore;
  traces: TraceStore;
} & FilteredSearchDeps &
  StartExecutionDeps &
  ExecutionResponseDeps &
  IdempotencyDeps;

/** How a route names the request's fields in its 400s (`prompt.question`, `filters.context`). */
export interface RequestFieldNames {
  value(placeholder: string): string;
  filter(placeholder: string): string;
}

const EXECUTE_FIELDS: RequestFieldNames = {
  value: (name) => `prompt.${name}`,
  filter: (name) => `filters.${name}`,
};

/** §9.2 steps 5–6 on a request whose shape is valid: EX-1, values, filters, classifications. */
export function checkAgentRequest(
  agent: Pick<Agent, 'placeholders'>,
  request: Pick<ExecuteAgentBody, 'prompt' | 'classification' | 'filters'>,
  closure: Record<string, string[]>,
  filterDepth: number,
  fields: RequestFieldNames = EXECUTE_FIELDS,
): AgentRequestContent {
  const queries = agent.placeholders.filter((p) => p.type === 'query').map((p) => p.name);
  const missing = queries.filter((name) => !(name in request.prompt));
  const unknown = unknownValues(request.prompt, queries, missing, fields);
  if (missing.length > 0) {
    const items: ErrorItem[] = missing.map((name) => ({
      type: 'missing_query_value',
      path: fields.value(name),
      placeholder: name,
      message: 'value required',
    }));
    // A misspelled name is the likelier cause of a missing value: it comes first.
    const detail = `Missing values for query placeholders: ${missing.join(', ')}`;
    if (unknown)
      throw new InvalidInput(`${unknown.detail}; ${detail[0]!.toLowerCase()}${detail.slice(1)}`, [
        ...unknown.items,
        ...items,
      ]);
    throw new InvalidInput(detail, items);
  }
  if (unknown) throw new InvalidInput(unknown.detail, unknown.items);
  const notStrings = queries.filter((name) => typeof request.prompt[name] !== 'string');
  if (notStrings.length > 0)
    throw new InvalidInput(`Values must be strings: ${notStrings.map(fields.value).join(', ')}`);
  const retrievalNames = agent.placeholders.filter(isRetrieval).map((p) => p.name);
  const filters = request.filters ?? {};
  for (const [name, filter] of Object.entries(filters)) {
    if (!retrievalNames.includes(name))
      throw new InvalidInput(`${fields.filter(name)} is not a retrieval placeholder of the agent`);
    try {
      compileFilter(parseFilter(filter, filterDepth), 'f.metadata');
    } catch (err) {
      throw new InvalidInput(`${fields.filter(name)}: ${(err as Error).message}`);
    }
  }
  const classifications = resolveReader(request.classification, closure);
  return { values: request.prompt as Record<string, string>, classifications, filters };
}

/**
 * SPEC §9.2 step 5's extra keys: each named with the agent's closest query placeholder (a
 * missing one first), e.g. `prompt.questoin (closest placeholder: prompt.question)`.
 */
function unknownValues(
  prompt: Record<string, unknown>,
  queries: string[],
  missing: string[],
  fields: RequestFieldNames,
): { detail: string; items: ErrorItem[] } | null {
  const extra = Object.keys(prompt).filter((name) => !queries.includes(name));
  if (extra.length === 0) return null;
  const items = extra.map((name): ErrorItem => {
    const closest = closestName(name, missing) ?? closestName(name, queries);
    return {
      type: 'unknown_query_value',
      path: fields.value(name),
      ...(closest ? { closest_placeholder: closest } : {}),
      message: closest
        ? `not a query placeholder of the agent; the closest one is ${fields.value(closest)}`
        : 'not a query placeholder of the agent, which has none',
    };
  });
  const named = items.map((item) =>
    item.closest_placeholder
      ? `${item.path} (closest placeholder: ${fields.value(item.closest_placeholder as string)})`
      : item.path!,
  );
  return { detail: `Not query placeholders of the agent: ${named.join(', ')}`, items };
}

/** Runs the steps at once; throws the first failure in argument order, not in time order. */
export async function inOrder<T extends readonly unknown[]>(steps: {
  [K in keyof T]: () => Promise<T[K]>;
}): Promise<T> {
  // An async wrapper turns a step's synchronous throw (a bad header) into its rejection.
  const settled = await Promise.allSettled(steps.map(async (step) => step()));
  const failed = settled.find((s) => s.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

export interface AgentExecutionTarget {
  /** The agent as it runs: the current definition, or the version the request names. */
  agent: Agent;
  pipeline: Pipeline;
  llm: Llm;
}

interface StartedAgentExecution {
  executionId: string;
  /** DX-4: a repeat of an earlier request under its Idempotency-Key. */
  replayed: boolean;
  /** The trace's id and whether it is stored yet, when the execution is traced. */
  trace?: TraceHeader;
}

/**
 * The rest of §9.2 (every prompt reference resolves for this key, PC-8), then the start: one
 * execution per request, or per `Idempotency-Key` and `fingerprint` (DX-4, target `agent:<id>`).
 */
export async function startAgentExecution(
  deps: AgentExecutionDeps,
  /** The HTTP request, for its Idempotency-Key; null for a WebSocket turn. */
  req: Request | null,
  principal: Principal,
  { agent, pipeline, llm }: AgentExecutionTarget,
  request: {
    content: AgentRequestContent;
    tracing?: boolean;
    temperature?: number | null | undefined;
    /** A /v1/responses create's `store: false` (issue 34): the content goes when it finishes. */
    store?: boolean;
  },
  fingerprint: readonly unknown[],
): Promise<StartedAgentExecution> {
  const templates = agent.prompt.filter((m) => m.include).map((m) => m.template);
  const hasReferences = (await checkAgentReferences(deps, principal, templates, true)).length > 0;
  const traceId = request.tracing ? randomUUID() : undefined;
  const start = (ids: ExecutionIds) =>
    startExecution<AgentExecutionInput>(
      deps,
      {
        record: {
          kind: 'agent',
          api_key_id: principal.keyId,
          agent_id: agent.id,
          agent_version: agent.version,
          pipeline_id: pipeline.id,
          llm_id: llm.id,
          trace_id: traceId ?? null,
          ...(request.store === false ? { store: false } : {}),
        },
        content: request.content,
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
          ...(typeof request.temperature === 'number' ? { temperature: request.temperature } : {}),
          ...(traceId ? { traceId } : {}),
        }),
        searchAttributes: {
          AgentId: agent.id,
          PipelineId: pipeline.id,
          LlmId: llm.id,
          ApiKeyId: principal.keyId,
        },
        names: { agent: agent.name, pipeline: pipeline.name, llm: llm.name },
      },
      ids,
    );
  const { executionId, replayed } = await withIdempotency(deps, req, `agent:${agent.id}`, fingerprint, start);
  const tracingId = replayed ? (await deps.executions.get(executionId))?.trace_id : traceId;
  return {
    executionId,
    replayed,
    ...(tracingId
      ? {
          trace: {
            traceId: tracingId,
            stored: async () => (await deps.traces.get(tracingId, principal.keyId)) !== null,
          },
        }
      : {}),
  };
}
