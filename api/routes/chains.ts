// Seed 002's stored chains (SPEC §13 CH-1): create (needs execute:chains, as the seed says),
// list, get and delete under /api/v1/chains; execution is in chain-execution.ts. Success bodies
// keep the seed's shapes; errors are `{"success": false, "error", "details"?}`.
import { Router } from 'express';
import { randomBytes } from 'node:crypto';
import type { ChainStore, StoredChain } from '../../db/chain-store';
import type { PromptStore } from '../../db/prompt-store';
import { Forbidden, InvalidInput } from '../../domain/errors';
import type { Limits } from '../../domain/limits';
import { can, canOnAll, type Principal } from '../../domain/permissions';
import { loadChain } from '../chain-access';
import { principalOf } from '../auth';
import type { RouteRegistry } from '../route-registry';
import { chainSummarySchema, createChainSchema, type CreateChainBody } from '../schemas/chains';
import { chainExecutionRoute, type ChainExecutionDeps } from './chain-execution';

type ChainRouteDeps = {
  chains: ChainStore;
  prompts: PromptStore;
  limits: Pick<Limits, 'chainSteps'>;
} & ChainExecutionDeps;

/** CH-1's create response, exactly the seed's shape. */
function presentChainSummary(c: StoredChain) {
  return {
    chainId: c.id,
    name: c.name,
    stepsCount: c.steps.length,
    settings: { stopOnError: c.stopOnError, maxConcurrency: c.maxConcurrency },
    usage: { totalExecutions: c.totalExecutions, lastExecutedAt: c.lastExecutedAt?.toISOString() ?? null },
  };
}

/** GET and list: the summary, then the definition. */
function presentChain(c: StoredChain) {
  return {
    ...presentChainSummary(c),
    description: c.description,
    steps: c.steps,
    tags: c.tags,
    metadata: c.metadata,
    guardrails: {
      rateLimitPerMinute: c.guardrails.rateLimitPerMinute ?? null,
      maxTokensPerExecution: c.guardrails.maxTokensPerExecution ?? null,
    },
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
  };
}

/** Unique orders, step attachments naming steps, and prompts that exist and that the key can read. */
async function checkSteps(deps: ChainRouteDeps, principal: Principal, body: CreateChainBody): Promise<void> {
  const seen = new Map<number, number>();
  const duplicates: string[] = [];
  body.steps.forEach((step, i) => {
    const first = seen.get(step.order);
    if (first !== undefined)
      duplicates.push(`steps[${i}].order ${step.order} is already used by steps[${first}]`);
    else seen.set(step.order, i);
  });
  if (duplicates.length > 0) throw new InvalidInput(`Step orders must be unique: ${duplicates.join('; ')}`);
  // Keys are step orders as written by JSON (`"2"`): `"02"` or `"-0"` would never be looked up.
  const stray = Object.keys(body.metadata?.stepAttachments ?? {}).filter(
    (order) => !seen.has(Number(order)) || String(Number(order)) !== order,
  );
  if (stray.length > 0)
    throw new InvalidInput(
      `metadata.stepAttachments names no step of the chain: ${stray.map((o) => `order ${o}`).join(', ')}`,
    );
  const prompts = await deps.prompts.getMany(body.steps.map((s) => s.promptId));
  const problems = body.steps.flatMap((step, i) => {
    const prompt = prompts.get(step.promptId);
    // Like PC-8: a prompt the key cannot read does not exist for it.
    if (prompt && can(principal, 'read', 'prompts', { id: prompt.promptId, ownerKeyId: prompt.ownerKeyId }))
      return [];
    return [
      { step: i, order: step.order, promptId: step.promptId, reason: `Prompt ${step.promptId} not found` },
    ];
  });
  if (problems.length > 0)
    throw new InvalidInput(
      `Invalid chain steps: ${problems.map((p) => `steps[${p.step}] (order ${p.order}): prompt ${p.promptId} not found`).join('; ')}`,
    ).withDetails(problems.map(({ order, promptId, reason }) => ({ order, promptId, reason })));
}

export function chainRoutes(routes: RouteRegistry, deps: ChainRouteDeps): Router {
  const router = Router();

  routes.add<CreateChainBody>(
    router,
    {
      method: 'post',
      path: '/api/v1/chains',
      summary: 'Store a chain of prompts run one after another (CH-1; needs execute:chains)',
      tag: 'Chains',
      permission: 'execute:chains',
      body: createChainSchema(deps.limits),
      success: {
        status: 201,
        description: '{chainId, name, stepsCount, settings, usage}',
        schema: chainSummarySchema,
      },
      errors: [400, 401, 403],
    },
    async (req, res) => {
      const principal = principalOf(req);
      if (!canOnAll(principal, 'execute', 'chains'))
        throw new Forbidden('API key lacks execute:chains permission to create chains');
      const body = req.body;
      await checkSteps(deps, principal, body);
      const chain = await deps.chains.create({
        id: `chain_${randomBytes(12).toString('hex')}`,
        name: body.name,
        description: body.description ?? null,
        steps: [...body.steps].sort((a, b) => a.order - b.order),
        tags: body.tags ?? [],
        stopOnError: body.stopOnError ?? true,
        maxConcurrency: body.maxConcurrency ?? 1,
        metadata: body.metadata ?? {},
        guardrails: body.guardrails ?? {},
        ownerKeyId: principal.keyId,
      });
      res.status(201).json(presentChainSummary(chain));
    },
  );

  routes.add(
    router,
    {
      method: 'get',
      path: '/api/v1/chains',
      summary: 'The chains the key can read',
      tag: 'Chains',
      permission: 'read:chains',
      success: { status: 200, description: '{"chains": [...]}' },
      errors: [401],
    },
    async (req, res) => {
      const chains = await deps.chains.listReadable(principalOf(req));
      res.json({ chains: chains.map(presentChain) });
    },
  );

  routes.add(
    router,
    {
      method: 'get',
      path: '/api/v1/chains/:chainId',
      summary: 'One chain: the summary and its definition',
      tag: 'Chains',
      permission: 'read:chains',
      success: { status: 200, description: 'The chain' },
      errors: [401, 404],
    },
    async (req, res) => {
      res.json(presentChain(await loadChain(deps.chains, principalOf(req), req.params.chainId, 'read')));
    },
  );

  routes.add(
    router,
    {
      method: 'delete',
      path: '/api/v1/chains/:chainId',
      summary: 'Delete a chain (running executions finish on their snapshot of it)',
      tag: 'Chains',
      permission: 'write:chains',
      success: { status: 204, description: 'Deleted (SPEC §1: 204 delete)' },
      errors: [401, 403, 404],
    },
    async (req, res) => {
      const chain = await loadChain(deps.chains, principalOf(req), req.params.chainId, 'write');
      await deps.chains.delete(chain.id);
      res.status(204).end();
    },
  );

  chainExecutionRoute(routes, router, deps);
  return router;
}
