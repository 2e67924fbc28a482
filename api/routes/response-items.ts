// GET /v1/responses/{id}/input_items (SPEC OR-4): the items the model was given for a response, the
// context its `previous_response_id` brought and its own input, in OpenAI's list shape (the last
// item first unless `order=asc`). A response whose content expired lists nothing, as its GET shows
// no output (docs/decisions.md, "Input items").
import { Router } from 'express';
import { InvalidInput } from '../../domain/errors';
import type { ResponseItem } from '../../domain/response-items';
import { visibleResponse } from '../response-records';
import { inputOf } from '../responses-conversation';
import type { RouteRegistry } from '../route-registry';
import { inputItemListSchema } from '../schemas/response-objects';
import { INPUT_ITEMS_QUERY } from '../schemas/responses';
import type { ExecutionRouteDeps } from './executions';
import { openAiRoute } from './openai-route';

const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;

/** The list's parameters; a 400 naming the one that is wrong. */
function listQuery(query: Record<string, unknown>): { after?: string; limit: number; order: 'asc' | 'desc' } {
  const { after, limit = String(DEFAULT_LIMIT), order = 'desc' } = query;
  if (order !== 'asc' && order !== 'desc') throw new InvalidInput('order must be asc or desc');
  if (typeof limit !== 'string' || !/^\d{1,3}$/.test(limit) || +limit < 1 || +limit > MAX_LIMIT)
    throw new InvalidInput(`limit must be an integer from 1 to ${MAX_LIMIT}`);
  if (after !== undefined && typeof after !== 'string') throw new InvalidInput('after must be one item id');
  return { ...(after ? { after } : {}), limit: Number(limit), order };
}

/** As OpenAI lists them: a message's text content as a part, its status `completed`. */
function listed(item: ResponseItem): ResponseItem {
  if (item.type !== 'message') return item;
  const part = item.role === 'assistant' ? 'output_text' : 'input_text';
  const content = typeof item.content === 'string' ? [{ type: part, text: item.content }] : item.content;
  return { ...item, content, status: item.status ?? 'completed' };
}

export function responseItemRoutes(
  routes: RouteRegistry,
  deps: Pick<ExecutionRouteDeps, 'executions'>,
): Router {
  const router = Router();
  routes.add(
    router,
    openAiRoute({
      method: 'get',
      path: '/v1/responses/:id/input_items',
      summary: "A response's input items: its previous response's, then its own (the last first by default)",
      permission: 'the key that started it, or admin',
      query: INPUT_ITEMS_QUERY,
      success: { status: 200, description: 'The list', schema: inputItemListSchema },
      errors: [400, 401, 404],
    }),
    async (req, res) => {
      const { after, limit, order } = listQuery(req.query);
      const items = inputOf(await visibleResponse(deps, req)).map(listed);
      if (order === 'desc') items.reverse();
      const from = after === undefined ? 0 : items.findIndex((item) => item.id === after) + 1;
      if (from === 0 && after !== undefined)
        throw new InvalidInput(`after names no input item of this response: ${after}`);
      const data = items.slice(from, from + limit);
      res.json({
        object: 'list',
        data,
        first_id: data[0]?.id ?? null,
        last_id: data.at(-1)?.id ?? null,
        has_more: from + limit < items.length,
      });
    },
  );
  return router;
}
