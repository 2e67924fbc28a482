// Seed 002's prompt library (SPEC §12): /api/v1/prompts (PC-1, PC-2, PC-7), each stored with its
// embeddability analysis; a changed or deleted prompt clears its EXECUTE cache entries (PC-5).
// Success bodies keep the seed's shapes; errors are `{"success": false, "error", "details"?}`
// (api/error-handler.ts).
import { Router } from 'express';
import { randomBytes } from 'node:crypto';
import type { LlmStore } from '../../db/llm-store';
import type { PromptStore, StoredPrompt } from '../../db/prompt-store';
import type { RoutingPolicyStore } from '../../db/routing-policy-store';
import { Conflict, Forbidden, InvalidInput, NotFound } from '../../domain/errors';
import type { Limits } from '../../domain/limits';
import { can, canOnAll, type Principal } from '../../domain/permissions';
import { analyzeEmbeddability, type PromptDefinition } from '../../domain/prompt-analysis';
import type { ExecuteCache } from '../../infra/execute-cache';
import { newId } from '../../infra/ids';
import { loadSeedObject } from '../access';
import { principalOf } from '../auth';
import { checkPromptReferences } from '../prompt-references';
import type { RouteRegistry } from '../route-registry';
import {
  createPromptSchema,
  promptEnvelopeSchema,
  updatePromptSchema,
  type PromptBody,
} from '../schemas/prompts';

interface PromptRouteDeps {
  prompts: PromptStore;
  routingPolicies: RoutingPolicyStore;
  llms: LlmStore;
  executeCache: ExecuteCache;
  /** SPEC §18: template size and reference depth. */
  limits: Pick<Limits, 'templateBytes' | 'chainDepth'>;
}

function presentPrompt(p: StoredPrompt) {
  const a = analyzeEmbeddability(p);
  return {
    id: p.id,
    promptId: p.promptId,
    name: p.name,
    systemPrompt: p.systemPrompt,
    userPrompt: p.userPrompt,
    temperature: p.temperature,
    attachment: p.attachment,
    routingPolicyId: p.routingPolicyId,
    customGatewayId: p.customGatewayId,
    isEmbeddable: a.isEmbeddable,
    executionMode: a.executionMode,
    requiresAttachment: a.requiresAttachment,
    requiresDynamicData: a.requiresDynamicData,
    embeddingBlockedReason: a.blockedReason,
    suggestedMode: a.suggestedMode,
    warnings: a.warnings,
    createdAt: p.createdAt.toISOString(),
    updatedAt: p.updatedAt.toISOString(),
  };
}

/** A listed prompt: the same fields, its embeddability grouped under `embeddability`. */
function presentListed(p: StoredPrompt) {
  const {
    isEmbeddable,
    executionMode,
    requiresAttachment,
    requiresDynamicData,
    embeddingBlockedReason,
    suggestedMode,
    warnings,
    ...prompt
  } = presentPrompt(p);
  return {
    ...prompt,
    embeddability: {
      isEmbeddable,
      executionMode,
      requiresAttachment,
      requiresDynamicData,
      blockedReason: embeddingBlockedReason,
      suggestedMode,
      warnings,
    },
  };
}

function checkTemplateSize(def: PromptDefinition, limitBytes: number): void {
  for (const [field, text] of [
    ['systemPrompt', def.systemPrompt],
    ['userPrompt', def.userPrompt],
  ] as const) {
    const bytes = text ? Buffer.byteLength(text, 'utf8') : 0;
    if (bytes > limitBytes)
      throw new InvalidInput(`${field} is ${bytes} bytes; the template limit is ${limitBytes} bytes`);
  }
}

export function promptRoutes(routes: RouteRegistry, deps: PromptRouteDeps): Router {
  const router = Router();

  const loadPrompt = (principal: Principal, promptId: unknown, action: 'read' | 'write') =>
    loadSeedObject(
      principal,
      action,
      'prompts',
      'prompt',
      String(promptId),
      (id) => deps.prompts.get(id),
      (p) => p.promptId,
    );

  /** The routing of a prompt names objects that exist and that the key can read (400 otherwise). */
  const checkRouting = async (principal: Principal, def: PromptDefinition): Promise<void> => {
    if (def.routingPolicyId) {
      const policy = await deps.routingPolicies.get(def.routingPolicyId);
      if (!policy || !can(principal, 'read', 'routing_policies', policy))
        throw new InvalidInput(`routingPolicyId: routing policy ${def.routingPolicyId} not found`);
    }
    if (def.customGatewayId) {
      const llm = await deps.llms.get(def.customGatewayId);
      if (!llm || !can(principal, 'read', 'llms', llm))
        throw new InvalidInput(`customGatewayId: LLM ${def.customGatewayId} not found`);
    }
  };

  const definitionOf = (
    body: Partial<PromptBody>,
    base?: StoredPrompt,
  ): PromptDefinition & { name: string } => ({
    name: body.name ?? base!.name,
    systemPrompt: body.systemPrompt !== undefined ? body.systemPrompt : (base?.systemPrompt ?? null),
    userPrompt: body.userPrompt ?? base!.userPrompt,
    temperature: body.temperature !== undefined ? body.temperature : (base?.temperature ?? null),
    attachment: body.attachment !== undefined ? body.attachment : (base?.attachment ?? null),
    routingPolicyId:
      body.routingPolicyId !== undefined
        ? (body.routingPolicyId?.toLowerCase() ?? null)
        : (base?.routingPolicyId ?? null),
    customGatewayId:
      body.customGatewayId !== undefined
        ? (body.customGatewayId?.toLowerCase() ?? null)
        : (base?.customGatewayId ?? null),
    requiresAttachment: body.requiresAttachment ?? base?.requiresAttachment ?? false,
    requiresDynamicData: body.requiresDynamicData ?? base?.requiresDynamicData ?? false,
  });

  routes.add<PromptBody>(
    router,
    {
      method: 'post',
      path: '/api/v1/prompts',
      summary: 'Store a prompt; its embeddability is analysed (PC-1, PC-2)',
      tag: 'Prompt library',
      permission: 'write:prompts',
      body: createPromptSchema(deps.limits),
      success: {
        status: 201,
        description: '{"success": true, "prompt": {...}}',
        schema: promptEnvelopeSchema,
      },
      errors: [400, 401, 403, 409],
    },
    async (req, res) => {
      const principal = principalOf(req);
      if (!canOnAll(principal, 'write', 'prompts'))
        throw new Forbidden('API key lacks write:prompts permission to create prompts');
      const def = definitionOf(req.body);
      checkTemplateSize(def, deps.limits.templateBytes);
      const promptId = req.body.promptId ?? `prompt_${randomBytes(8).toString('hex')}`;
      if (await deps.prompts.get(promptId)) throw new Conflict(`Prompt id already exists: ${promptId}`);
      await checkRouting(principal, def);
      const references = await checkPromptReferences(
        deps,
        principal,
        { systemPrompt: def.systemPrompt, userPrompt: def.userPrompt },
        promptId,
      );
      const prompt = await deps.prompts.create(
        { ...def, id: newId(), promptId, ownerKeyId: principal.keyId },
        references,
      );
      res.status(201).json({ success: true, prompt: presentPrompt(prompt) });
    },
  );

  routes.add(
    router,
    {
      method: 'get',
      path: '/api/v1/prompts',
      summary: 'The prompts the key can read, with their embeddability',
      tag: 'Prompt library',
      permission: 'read:prompts',
      success: { status: 200, description: '{"prompts": [...]}' },
      errors: [401],
    },
    async (req, res) => {
      const prompts = await deps.prompts.listReadable(principalOf(req));
      res.json({ prompts: prompts.map(presentListed) });
    },
  );

  routes.add(
    router,
    {
      method: 'get',
      path: '/api/v1/prompts/:promptId',
      summary: 'One prompt',
      tag: 'Prompt library',
      permission: 'read:prompts',
      success: {
        status: 200,
        description: '{"success": true, "prompt": {...}}',
        schema: promptEnvelopeSchema,
      },
      errors: [401, 404],
    },
    async (req, res) => {
      const prompt = await loadPrompt(principalOf(req), req.params.promptId, 'read');
      res.json({ success: true, prompt: presentPrompt(prompt) });
    },
  );

  routes.add<Partial<PromptBody>>(
    router,
    {
      method: 'put',
      path: '/api/v1/prompts/:promptId',
      summary: 'Update a prompt (named fields only); re-analysed, its EXECUTE cache cleared',
      tag: 'Prompt library',
      permission: 'write:prompts',
      body: updatePromptSchema(deps.limits),
      success: {
        status: 200,
        description: '{"success": true, "prompt": {...}}',
        schema: promptEnvelopeSchema,
      },
      errors: [400, 401, 403, 404],
    },
    async (req, res) => {
      const principal = principalOf(req);
      const current = await loadPrompt(principal, req.params.promptId, 'write');
      const def = definitionOf(req.body, current);
      checkTemplateSize(def, deps.limits.templateBytes);
      await checkRouting(principal, def);
      const references = await checkPromptReferences(
        deps,
        principal,
        { systemPrompt: def.systemPrompt, userPrompt: def.userPrompt },
        current.promptId,
      );
      const updated = await deps.prompts.update(current.promptId, def, references);
      if (!updated) throw new NotFound(`Prompt ${current.promptId} not found`);
      await deps.executeCache.clearPrompt(updated.promptId);
      res.json({ success: true, prompt: presentPrompt(updated) });
    },
  );

  routes.add(
    router,
    {
      method: 'delete',
      path: '/api/v1/prompts/:promptId',
      summary: 'Delete a prompt (409 while a prompt, agent or chain references it)',
      tag: 'Prompt library',
      permission: 'write:prompts',
      success: { status: 204, description: 'Deleted (SPEC §1: 204 delete)' },
      errors: [401, 403, 404, 409],
    },
    async (req, res) => {
      const prompt = await loadPrompt(principalOf(req), req.params.promptId, 'write');
      await deps.prompts.delete(prompt.promptId);
      await deps.executeCache.clearPrompt(prompt.promptId);
      res.status(204).end();
    },
  );

  return router;
}
