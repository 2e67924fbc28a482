// GET /api/v1/cache/stats (SPEC §12 PC-5): the EXECUTE reference cache's statistics, for admins.
import { Router } from 'express';
import { Forbidden } from '../../domain/errors';
import { isAdmin } from '../../domain/permissions';
import type { ExecuteCache } from '../../infra/execute-cache';
import { principalOf } from '../auth';
import type { RouteRegistry } from '../route-registry';

export function cacheStatsRoutes(routes: RouteRegistry, deps: { executeCache: ExecuteCache }): Router {
  const router = Router();
  routes.add(
    router,
    {
      method: 'get',
      path: '/api/v1/cache/stats',
      summary: 'EXECUTE cache statistics (admin)',
      tag: 'Prompt library',
      permission: 'admin',
      success: { status: 200, description: '{hits, misses, entries, hitRate}' },
      errors: [401, 403],
    },
    async (req, res) => {
      if (!isAdmin(principalOf(req))) throw new Forbidden('Cache statistics need the admin permission');
      res.json(await deps.executeCache.stats());
    },
  );

  return router;
}
