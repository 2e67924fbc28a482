// Seed 002's routing policies (SPEC §12 PC-10): registered LLMs a prompt's execution tries in
// order. Success bodies keep the seed's shapes; errors are `{"success": false, "error",
// "details"?}` (api/error-handler.ts).
import { Router, type Request } from 'express';
import type { LlmStore } from '../../db/llm-store';
import type { PromptStore } from '../../db/prompt-store';
import type { RoutingPolicy, RoutingPolicyStore } from '../../db/routing-policy-store';
import { Conflict, Forbidden, InvalidInput, NotFound } from '../../domain/errors';
import { can, canOnAll, type Principal } from '../../domain/permissions';
import { isUuid, newId } from '../../infra/ids';
import { loadSeedObject } from '../access';
import { principalOf } from '../auth';
import type { RouteRegistry } from '../route-registry';
import {
  routingPolicyBodySchema,
  updateRoutingPolicySchema,
  type RoutingPolicyBody,
} from '../schemas/prompts';

interface RoutingPolicyRouteDeps {
  routingPolicies: RoutingPolicyStore;
  llms: LlmStore;
  /** A policy a prompt uses cannot be deleted. */
  prompts: PromptStore;
}

const presentPolicy = (p: RoutingPolicy) => ({
  id: p.id,
  name: p.name,
  llms: p.llms,
  createdAt: p.createdAt.toISOString(),
  updatedAt: p.updatedAt.toISOString(),
});

export function routingPolicyRoutes(routes: RouteRegistry, deps: RoutingPolicyRouteDeps): Router {
  const router = Router();
  const load = (principal: Principal, req: Request, action: 'read' | 'write') =>
    loadSeedObject(
      principal,
      action,
      'routing_policies',
      'routing policy',
      String(req.params.id),
      (id) => (isUuid(id) ? deps.routingPolicies.get(id.toLowerCase()) : Promise.resolve(null)),
      (policy) => policy.id,
    );

  const checkLlms = async (principal: Principal, llms: string[]): Promise<string[]> => {
    const ids = llms.map((id) => id.toLowerCase());
    for (const [i, id] of ids.entries()) {
      const llm = await deps.llms.get(id);
      if (!llm || !can(principal, 'read', 'llms', llm))
        throw new InvalidInput(`llms[${i}]: LLM ${id} not found`);
    }
    return ids;
  };

  routes.add<RoutingPolicyBody>(
    router,
    {
      method: 'post',
      path: '/api/v1/routing-policies',
      summary: 'Create a routing policy: registered LLMs tried in order (PC-10)',
      tag: 'Prompt library',
      permission: 'write:routing_policies',
      body: routingPolicyBodySchema,
      success: { status: 201, description: '{"success": true, "routingPolicy": {id, name, llms}}' },
      errors: [400, 401, 403, 409],
    },
    async (req, res) => {
      const principal = principalOf(req);
      if (!canOnAll(principal, 'write', 'routing_policies'))
        throw new Forbidden('API key lacks write:routing_policies permission to create routing policies');
      const llms = await checkLlms(principal, req.body.llms);
      const policy = await deps.routingPolicies.create({
        id: newId(),
        name: req.body.name,
        llms,
        ownerKeyId: principal.keyId,
      });
      res.status(201).json({ success: true, routingPolicy: presentPolicy(policy) });
    },
  );

  routes.add(
    router,
    {
      method: 'get',
      path: '/api/v1/routing-policies',
      summary: 'The routing policies the key can read',
      tag: 'Prompt library',
      permission: 'read:routing_policies',
      success: { status: 200, description: '{"routingPolicies": [...]}' },
      errors: [401],
    },
    async (req, res) => {
      const policies = await deps.routingPolicies.listReadable(principalOf(req));
      res.json({ routingPolicies: policies.map(presentPolicy) });
    },
  );

  routes.add(
    router,
    {
      method: 'get',
      path: '/api/v1/routing-policies/:id',
      summary: 'One routing policy',
      tag: 'Prompt library',
      permission: 'read:routing_policies',
      success: { status: 200, description: '{"success": true, "routingPolicy": {...}}' },
      errors: [401, 404],
    },
    async (req, res) => {
      const policy = await load(principalOf(req), req, 'read');
      res.json({ success: true, routingPolicy: presentPolicy(policy) });
    },
  );

  routes.add<Partial<RoutingPolicyBody>>(
    router,
    {
      method: 'put',
      path: '/api/v1/routing-policies/:id',
      summary: 'Update a routing policy (named fields only)',
      tag: 'Prompt library',
      permission: 'write:routing_policies',
      body: updateRoutingPolicySchema,
      success: { status: 200, description: '{"success": true, "routingPolicy": {...}}' },
      errors: [400, 401, 403, 404, 409],
    },
    async (req, res) => {
      const principal = principalOf(req);
      const current = await load(principal, req, 'write');
      const llms = req.body.llms ? await checkLlms(principal, req.body.llms) : current.llms;
      const updated = await deps.routingPolicies.update(current.id, {
        name: req.body.name ?? current.name,
        llms,
      });
      if (!updated) throw new NotFound(`Routing policy ${current.id} not found`);
      res.json({ success: true, routingPolicy: presentPolicy(updated) });
    },
  );

  routes.add(
    router,
    {
      method: 'delete',
      path: '/api/v1/routing-policies/:id',
      summary: 'Delete a routing policy (409 while a prompt uses it)',
      tag: 'Prompt library',
      permission: 'write:routing_policies',
      success: { status: 204, description: 'Deleted (SPEC §1: 204 delete)' },
      errors: [401, 403, 404, 409],
    },
    async (req, res) => {
      const policy = await load(principalOf(req), req, 'write');
      const users = await deps.prompts.usingRoutingPolicy(policy.id);
      if (users.length > 0)
        throw new Conflict(`Routing policy ${policy.id} is used by prompt(s): ${users.join(', ')}`);
      await deps.routingPolicies.delete(policy.id);
      res.status(204).end();
    },
  );
  return router;
}
