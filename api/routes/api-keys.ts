// /api_keys (SPEC §2): secrets are generated here (256 random bits), shown once, stored as HMAC.
import { Router } from 'express';
import { randomBytes } from 'node:crypto';
import type { ApiKey, ApiKeyStore } from '../../db/api-key-store';
import { API_KEY_FIELDS } from '../../db/api-key-store';
import type { LlmStore } from '../../db/llm-store';
import { Forbidden, InvalidInput } from '../../domain/errors';
import { parseListQuery } from '../../domain/list-params';
import {
  holdsPermission,
  isValidPermission,
  type ObjectType,
  type Principal,
} from '../../domain/permissions';
import type { KeyRing } from '../../infra/crypto';
import { isUuid, newId } from '../../infra/ids';
import { loadAuthorized, requireCreate } from '../access';
import { principalOf } from '../auth';
import { presentApiKey } from '../presenters';
import type { RouteRegistry } from '../route-registry';
import {
  apiKeySchema,
  createApiKeySchema,
  updateApiKeySchema,
  type CreateApiKeyBody,
  type UpdateApiKeyBody,
} from '../schemas/api-keys';
import { LIST_QUERY, listEnvelopeSchema } from '../schemas/common';

interface ApiKeyRouteDeps {
  apiKeys: ApiKeyStore;
  llms: LlmStore;
  keyring: KeyRing;
}

/** The permissions of `permissions` the principal does not hold; owned objects count as held (AUTH-3). */
async function notHeld(
  deps: ApiKeyRouteDeps,
  principal: Principal,
  permissions: string[],
): Promise<string[]> {
  const owned = new Set<string>();
  for (const p of permissions) {
    const [, type, id] = p.split(':');
    if (!id || !isUuid(id)) continue;
    const object =
      type === 'llms' ? await deps.llms.get(id) : type === 'api_keys' ? await deps.apiKeys.get(id) : null;
    if (object?.ownerKeyId === principal.keyId) owned.add(`${type}:${id}`);
  }
  const ownsObject = (type: ObjectType, id: string): boolean => owned.has(`${type}:${id}`);
  return permissions.filter((p) => !holdsPermission(principal, p, ownsObject));
}

/** AUTH-5: a key can grant only what it holds. */
async function checkGrantable(
  deps: ApiKeyRouteDeps,
  principal: Principal,
  permissions: string[],
): Promise<void> {
  const invalid = permissions.filter((p) => !isValidPermission(p));
  if (invalid.length > 0) throw new InvalidInput(`Invalid permission(s): ${invalid.join(', ')}`);
  const wider = await notHeld(deps, principal, permissions);
  if (wider.length > 0)
    throw new Forbidden(`An API key cannot grant permissions it does not hold: ${wider.join(', ')}`);
}

/**
 * The same rule seen from the other side: changing or deleting a key is granting (or taking
 * away) its permissions, so it needs every permission that key holds. Otherwise a key with
 * `write:api_keys` could strip or delete the admin key.
 */
async function checkOutranks(deps: ApiKeyRouteDeps, principal: Principal, target: ApiKey): Promise<void> {
  if (target.id === principal.keyId) return;
  const missing = await notHeld(deps, principal, target.permissions);
  if (missing.length > 0) {
    throw new Forbidden(`API key ${target.id} holds permissions the caller does not: ${missing.join(', ')}`);
  }
}

export function apiKeyRoutes(routes: RouteRegistry, deps: ApiKeyRouteDeps): Router {
  const router = Router();
  const load = (req: { params: Record<string, unknown> }, principal: Principal, action: 'read' | 'write') =>
    loadAuthorized(principal, action, 'api_keys', 'API key', req.params.id, (id) => deps.apiKeys.get(id));

  routes.add<CreateApiKeyBody>(
    router,
    {
      method: 'post',
      path: '/api_keys',
      summary: 'Create an API key (the secret is returned once)',
      tag: 'API keys',
      permission: 'write:api_keys',
      body: createApiKeySchema,
      success: { status: 201, description: 'The key, with its secret', schema: apiKeySchema },
      errors: [400, 401, 403, 409],
    },
    async (req, res) => {
      const principal = principalOf(req);
      requireCreate(principal, 'api_keys', 'API key');
      const permissions = req.body.permissions ?? [];
      await checkGrantable(deps, principal, permissions);
      const secret = randomBytes(32).toString('base64url');
      const key = await deps.apiKeys.create({
        id: newId(),
        name: req.body.name,
        description: req.body.description ?? null,
        permissions,
        ownerKeyId: principal.keyId,
        secretHmac: deps.keyring.hmac('api-key-secret', secret),
      });
      res.status(201).json({ ...presentApiKey(key), secret });
    },
  );

  routes.add(
    router,
    {
      method: 'get',
      path: '/api_keys',
      summary: 'List the API keys the caller can read',
      tag: 'API keys',
      query: LIST_QUERY,
      success: { status: 200, description: 'List envelope', schema: listEnvelopeSchema(apiKeySchema) },
      errors: [400, 401],
    },
    async (req, res) => {
      const page = await deps.apiKeys.list(principalOf(req), parseListQuery(req.query, API_KEY_FIELDS));
      res.json({ ...page, data: page.data.map(presentApiKey) });
    },
  );

  routes.add(
    router,
    {
      method: 'get',
      path: '/api_keys/:id',
      summary: 'Get an API key',
      tag: 'API keys',
      permission: 'read:api_keys',
      success: { status: 200, description: 'The key (never its secret)', schema: apiKeySchema },
      errors: [401, 404],
    },
    async (req, res) => {
      res.json(presentApiKey(await load(req, principalOf(req), 'read')));
    },
  );

  routes.add<UpdateApiKeyBody>(
    router,
    {
      method: 'patch',
      path: '/api_keys/:id',
      summary: 'Update name, description or permissions',
      tag: 'API keys',
      permission: 'write:api_keys',
      body: updateApiKeySchema,
      success: { status: 200, description: 'The updated key', schema: apiKeySchema },
      errors: [400, 401, 403, 404, 409],
    },
    async (req, res) => {
      const principal = principalOf(req);
      const key = await load(req, principal, 'write');
      await checkOutranks(deps, principal, key);
      if (req.body.permissions) await checkGrantable(deps, principal, req.body.permissions);
      if (
        req.body.name === undefined &&
        req.body.permissions === undefined &&
        req.body.description === undefined
      ) {
        throw new InvalidInput('Nothing to update');
      }
      const updated = await deps.apiKeys.update(key.id, {
        ...(req.body.name !== undefined ? { name: req.body.name } : {}),
        ...(req.body.description !== undefined ? { description: req.body.description } : {}),
        ...(req.body.permissions !== undefined ? { permissions: req.body.permissions } : {}),
      });
      res.json(presentApiKey(updated));
    },
  );

  routes.add(
    router,
    {
      method: 'delete',
      path: '/api_keys/:id',
      summary: 'Delete an API key (it stops working at once)',
      tag: 'API keys',
      permission: 'write:api_keys',
      success: { status: 204, description: 'Deleted' },
      errors: [401, 403, 404],
    },
    async (req, res) => {
      const principal = principalOf(req);
      const key = await load(req, principal, 'write');
      await checkOutranks(deps, principal, key);
      await deps.apiKeys.delete(key.id);
      res.status(204).end();
    },
  );

  return router;
}
