// /agents (SPEC §8): CRUD with every creation rule, versions (AG-11) and prompt inspection (§8.4).
import { Router } from 'express';
import { AGENT_FIELDS, type Agent, type AgentStore } from '../../db/agent-store';
import { inputVariables, type AgentLimits } from '../../domain/agent-definition';
import { normaliseAgent } from '../../domain/agent-rules';
import { Conflict, InvalidInput, NotFound } from '../../domain/errors';
import { parseListQuery } from '../../domain/list-params';
import type { Principal } from '../../domain/permissions';
import { newId } from '../../infra/ids';
import { loadAuthorized, requireCreate } from '../access';
import { principalOf } from '../auth';
import type { PlanningDeps } from '../../services/prompt-planner';
import type { PromptStore } from '../../db/prompt-store';
import { checkAgentReferences } from '../prompt-references';
import type { RouteRegistry } from '../route-registry';
import { agentSchema, createAgentSchema, updateAgentSchema, type AgentBody } from '../schemas/agents';
import { LIST_QUERY, listEnvelopeSchema } from '../schemas/common';

const presentAgent = (a: Agent) => ({
  id: a.id,
  name: a.name,
  description: a.description,
  prompt: a.prompt,
  placeholders: a.placeholders,
  metadata: a.metadata,
  tools: a.tools,
  version: a.version,
  created_at: a.created_at.toISOString(),
  updated_at: a.updated_at.toISOString(),
});

const NULLABLE = new Set(['description']);

export function agentRoutes(
  routes: RouteRegistry,
  deps: { agents: AgentStore; prompts: PromptStore; limits: AgentLimits } & PlanningDeps,
): Router {
  const router = Router();
  const load = (id: unknown, principal: Principal, action: 'read' | 'write') =>
    loadAuthorized(principal, action, 'agents', 'Agent', id, (aid) => deps.agents.get(aid));

  routes.add<AgentBody>(
    router,
    {
      method: 'post',
      path: '/agents',
      summary: 'Create an agent (every include and retrieval parameter materialised)',
      tag: 'Agents',
      permission: 'write:agents',
      body: createAgentSchema(deps.limits),
      success: { status: 201, description: 'The stored agent', schema: agentSchema },
      errors: [400, 401, 403, 409],
    },
    async (req, res) => {
      const principal = principalOf(req);
      requireCreate(principal, 'agents', 'agent');
      const definition = normaliseAgent(req.body, deps.limits);
      // AG-10: references name prompts the key can read, acyclic and within the chain depth.
      const references = await checkAgentReferences(
        deps,
        principal,
        definition.prompt.map((m) => m.template),
        false,
      );
      const id = newId();
      const agent = await deps.agents.create(
        {
          id,
          name: req.body.name,
          description: req.body.description ?? null,
          ownerKeyId: principal.keyId,
          ...definition,
        },
        (trx) => deps.prompts.setReferences('agent', id, references, trx),
      );
      res.status(201).json(presentAgent(agent));
    },
  );

  routes.add(
    router,
    {
      method: 'get',
      path: '/agents',
      summary: 'List the agents the caller can read',
      tag: 'Agents',
      query: LIST_QUERY,
      success: { status: 200, description: 'List envelope', schema: listEnvelopeSchema(agentSchema) },
      errors: [400, 401],
    },
    async (req, res) => {
      const page = await deps.agents.list(principalOf(req), parseListQuery(req.query, AGENT_FIELDS));
      res.json({ ...page, data: page.data.map(presentAgent) });
    },
  );

  routes.add(
    router,
    {
      method: 'get',
      path: '/agents/:id',
      summary: 'Get an agent',
      tag: 'Agents',
      permission: 'read:agents',
      success: { status: 200, description: 'The agent', schema: agentSchema },
      errors: [401, 404],
    },
    async (req, res) => {
      res.json(presentAgent(await load(req.params.id, principalOf(req), 'read')));
    },
  );

  routes.add<Partial<AgentBody>>(
    router,
    {
      method: 'patch',
      path: '/agents/:id',
      summary: 'Update an agent: named fields change, the merged agent is validated, the version increments',
      tag: 'Agents',
      permission: 'write:agents',
      body: updateAgentSchema(deps.limits),
      success: { status: 200, description: 'The agent', schema: agentSchema },
      errors: [400, 401, 403, 404, 409],
    },
    async (req, res) => {
      const principal = principalOf(req);
      const agent = await load(req.params.id, principal, 'write');
      const body = req.body as Record<string, unknown>;
      const nulls = Object.keys(body).filter((k) => body[k] === null && !NULLABLE.has(k));
      if (nulls.length > 0) throw new InvalidInput(`${nulls.join(', ')} cannot be null`);
      const definition = normaliseAgent(
        {
          prompt: req.body.prompt ?? agent.prompt,
          placeholders: req.body.placeholders ?? agent.placeholders,
          metadata: req.body.metadata ?? agent.metadata,
          tools: req.body.tools ?? agent.tools,
        },
        deps.limits,
      );
      const references = await checkAgentReferences(
        deps,
        principal,
        definition.prompt.map((m) => m.template),
        false,
      );
      const updated = await deps.agents.update(
        agent.id,
        agent.version,
        {
          name: req.body.name ?? agent.name,
          description: req.body.description === undefined ? agent.description : req.body.description,
          ...definition,
        },
        (trx) => deps.prompts.setReferences('agent', agent.id, references, trx),
      );
      if (!updated) throw new Conflict(`Agent ${agent.id} was changed concurrently; retry the update`);
      res.json(presentAgent(updated));
    },
  );

  routes.add(
    router,
    {
      method: 'delete',
      path: '/agents/:id',
      summary: 'Delete an agent (later executions, reads and dry runs answer 404)',
      tag: 'Agents',
      permission: 'write:agents',
      success: { status: 204, description: 'Deleted' },
      errors: [401, 403, 404],
    },
    async (req, res) => {
      const agent = await load(req.params.id, principalOf(req), 'write');
      await deps.agents.delete(agent.id, (trx) => deps.prompts.setReferences('agent', agent.id, [], trx));
      res.status(204).end();
    },
  );

  routes.add(
    router,
    {
      method: 'get',
      path: '/agents/:id/versions/:version',
      summary: 'The definition of an agent as it was at a version',
      tag: 'Agents',
      permission: 'read:agents',
      success: { status: 200, description: 'The agent at that version', schema: agentSchema },
      errors: [401, 404],
    },
    async (req, res) => {
      const agent = await load(req.params.id, principalOf(req), 'read');
      const n = String(req.params.version);
      const version = /^[1-9]\d{0,8}$/.test(n) ? await deps.agents.getVersion(agent.id, Number(n)) : null;
      if (!version) throw new NotFound(`Agent ${agent.id} has no version ${n}`);
      res.json({ id: agent.id, ...version, created_at: version.created_at.toISOString() });
    },
  );

  routes.add(
    router,
    {
      method: 'get',
      path: '/agents/:id/prompt',
      summary: 'Prompt inspection: stored messages, placeholders and input variables',
      tag: 'Agents',
      permission: 'read:agents',
      success: { status: 200, description: '{prompt, placeholders, input_variables}' },
      errors: [401, 404],
    },
    async (req, res) => {
      const agent = await load(req.params.id, principalOf(req), 'read');
      res.json({
        prompt: agent.prompt,
        placeholders: agent.placeholders,
        input_variables: inputVariables(agent),
      });
    },
  );
  return router;
}
