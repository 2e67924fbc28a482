// The create request of POST /v1/responses (issue 28) read as an agent execution's: the agent,
// pipeline and LLM it names (by id or name, with §9.2's statuses and in its order), and the
// execute route's request in this protocol's fields (`prompt.variables`, `metadata.*`).
import type { Request } from 'express';
import type { Agent } from '../db/agent-store';
import { InvalidInput, NotFound } from '../domain/errors';
import { can, type ObjectType, type Principal } from '../domain/permissions';
import { isUuid } from '../infra/ids';
import { loadAuthorized } from './access';
import {
  inOrder,
  type AgentExecutionDeps,
  type AgentExecutionTarget,
  type RequestFieldNames,
} from './agent-execution-start';
import { executeAgentSchema } from './schemas/agents';
import { retrieveBodySchema, type CreateResponseBody, type RetrieveBody } from './schemas/responses';
import { validate } from './validation';

/** The request's fields as a Responses client names them, in the 400s of §9.2. */
export const RESPONSES_FIELDS: RequestFieldNames = {
  value: (name) => `prompt.variables.${name}`,
  filter: (name) => `metadata.filters.${name}`,
};

/** `metadata.<field>`'s JSON text; 400 naming the field when it is no JSON or not of the kind. */
function jsonField(field: string, text: string, kind: 'object' | 'any'): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new InvalidInput(`metadata.${field} is not valid JSON`);
  }
  if (kind === 'object' && (value === null || typeof value !== 'object' || Array.isArray(value)))
    throw new InvalidInput(`metadata.${field} must be the JSON text of an object`);
  return value;
}

/** The JSON forms of `metadata.classification` take the execute route's classification schema. */
const classificationSchema = {
  type: 'object',
  properties: { 'metadata.classification': executeAgentSchema.properties.classification },
} as const;

function classificationOf(text: string): unknown {
  const value = jsonField('classification', text, 'any');
  validate(classificationSchema, { 'metadata.classification': value });
  return value;
}

/** The execute route's request in this protocol's fields (api/schemas/responses.ts). */
export function executeRequestOf(body: CreateResponseBody) {
  const variables = Object.entries(body.prompt.variables ?? {}).map(([name, value]) => [
    name,
    typeof value === 'string' ? value : value.text,
  ]);
  const { classification, filters } = body.metadata;
  return {
    prompt: Object.fromEntries(variables) as Record<string, string>,
    // CL-2's list and object forms travel as JSON text: metadata values are strings.
    classification: /^\s*[[{]/.test(classification) ? classificationOf(classification) : classification,
    ...(filters !== undefined
      ? { filters: jsonField('filters', filters, 'object') as Record<string, unknown> }
      : {}),
  };
}

/**
 * GET `?stream=true` and where to resume: `starting_after` or `Last-Event-ID`, the larger. The Go
 * SDK sends `stream` (and may send `starting_after`) as a JSON body without a content type.
 */
export function streamQuery(req: Request): { stream: boolean; startingAfter: number | undefined } {
  const body = validate<RetrieveBody>(retrieveBodySchema, req.body ?? {}, 'A GET body');
  const { stream, starting_after: after } = req.query;
  if (stream !== undefined && stream !== 'true' && stream !== 'false')
    throw new InvalidInput('stream must be true or false');
  const parse = (value: unknown, name: string): number | undefined => {
    if (value === undefined || value === '') return undefined;
    if (typeof value !== 'string' || !/^\d{1,15}$/.test(value))
      throw new InvalidInput(`${name} must be a non-negative integer (a sequence_number)`);
    return Number(value);
  };
  const fromQuery = parse(after, 'starting_after');
  const fromHeader = parse(req.header('last-event-id'), 'Last-Event-ID');
  const both = [fromQuery, fromHeader, body.starting_after].filter((n): n is number => typeof n === 'number');
  return {
    stream: stream === 'true' || body.stream === true,
    startingAfter: both.length ? Math.max(...both) : undefined,
  };
}

/**
 * An object a body field names by id or by name, with execute permission on it. A name the key
 * may not execute is answered as an unknown name: the key learns neither that it exists nor its
 * id (by id, §9.2's 403 stays: the caller already holds the id).
 */
async function named<T extends { id: string; ownerKeyId?: string | null }>(
  principal: Principal,
  type: ObjectType,
  label: string,
  value: string,
  store: { getCached(id: string): Promise<T | null>; idByName(name: string): Promise<string | null> },
): Promise<T> {
  const load = (key: string) => store.getCached(key);
  if (isUuid(value)) return loadAuthorized(principal, 'execute', type, label, value, load);
  const unknown = () => new NotFound(`${label} ${value} not found`);
  const id = await store.idByName(value);
  const object = id === null ? null : await load(id);
  if (object === null || !can(principal, 'execute', type, object)) throw unknown();
  return object;
}

/** `prompt.id` at `prompt.version` (omitted: the current one; AG-11 keeps every version). */
async function agentFor(
  deps: Pick<AgentExecutionDeps, 'agents'>,
  principal: Principal,
  prompt: CreateResponseBody['prompt'],
): Promise<Agent> {
  const agent = await named(principal, 'agents', 'Agent', prompt.id, deps.agents);
  const version = prompt.version == null ? agent.version : Number(prompt.version);
  if (version === agent.version) return agent;
  const stored = version < agent.version ? await deps.agents.getVersion(agent.id, version) : null;
  if (!stored) throw new NotFound(`Agent ${agent.id} has no version ${version}`);
  const { prompt: messages, placeholders, metadata, tools } = stored;
  return { ...agent, prompt: messages, placeholders, metadata, tools, version };
}

/** §9.2 steps 2–3 once the body names them: the agent, the pipeline, the LLM, at once. */
export async function targetOf(
  deps: Pick<AgentExecutionDeps, 'agents' | 'pipelines' | 'llms'>,
  principal: Principal,
  body: CreateResponseBody,
): Promise<AgentExecutionTarget> {
  const [agent, pipeline, llm] = await inOrder([
    () => agentFor(deps, principal, body.prompt),
    () => named(principal, 'pipelines', 'Pipeline', body.metadata.pipeline, deps.pipelines),
    () => named(principal, 'llms', 'LLM', body.model, deps.llms),
  ]);
  return { agent, pipeline, llm };
}

/** A plain create's LLM (`model`, by id or name), with execute permission on it (`execute:llms`). */
export const llmOf = (deps: Pick<AgentExecutionDeps, 'llms'>, principal: Principal, model: string) =>
  named(principal, 'llms', 'LLM', model, deps.llms);
