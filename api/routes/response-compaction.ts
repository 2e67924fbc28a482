// POST /v1/responses/compact (SPEC OR-4): the LLM `model` names compacts a conversation (the items
// `previous_response_id` continues, then `input`) with its provider's own compaction, `POST
// {endpoint}/responses/compact`. Its items (a `compaction` item's opaque `encrypted_content`, the
// messages it kept) go back to the client as given: the client sends them as the input of its next
// create. One call from the API, not a durable execution (docs/decisions.md, "Compaction").
import { Router } from 'express';
import OpenAI from 'openai';
import type { ResponseCompactParams } from 'openai/resources/responses/responses';
import { InvalidInput, NotFound, UpstreamFailed } from '../../domain/errors';
import { forProvider, inputItems } from '../../domain/response-items';
import { newId } from '../../infra/ids';
import { ModelClients } from '../../infra/model-clients';
import type { AgentExecutionDeps } from '../agent-execution-start';
import { principalOf } from '../auth';
import { contextOf } from '../responses-conversation';
import { usageOf } from '../responses-objects';
import { llmOf } from '../responses-request';
import type { RouteRegistry } from '../route-registry';
import { compactedResponseSchema } from '../schemas/response-objects';
import { compactRequestSchema, type CompactRequestBody } from '../schemas/responses';
import { openAiRoute } from './openai-route';

type CompactionDeps = Pick<AgentExecutionDeps, 'llms' | 'executions' | 'profiles'>;

/** What the provider is given besides the items, as the client gave it. */
const PASSED_THROUGH = [
  'instructions',
  'prompt_cache_key',
  'prompt_cache_retention',
  'prompt_cache_options',
  'service_tier',
] as const;

/**
 * The provider's compaction. Its 400 (the items) is the client's: a 400 with its words; anything
 * else (its 404 for an endpoint it lacks, 429, 5xx, the network) is the model server's: a 502,
 * which the SDKs retry by themselves.
 */
async function compactAt(
  client: OpenAI,
  params: ResponseCompactParams,
  options: { signal: AbortSignal; timeout: number },
): Promise<OpenAI.Responses.CompactedResponse> {
  try {
    return await client.responses.compact(params, options);
  } catch (err) {
    if (err instanceof OpenAI.APIError && (err.status === 400 || err.status === 422))
      throw new InvalidInput(`The model server rejected the compaction: ${err.message}`);
    throw new UpstreamFailed(`Model server failed: ${(err as Error).message}`);
  }
}

export function responseCompactionRoutes(routes: RouteRegistry, deps: CompactionDeps): Router {
  const router = Router();
  const clients = new ModelClients();

  routes.add<CompactRequestBody>(
    router,
    openAiRoute({
      method: 'post',
      path: '/v1/responses/compact',
      summary: "Compact a conversation with the LLM's provider: items to send as the next create's input",
      permission: 'execute:llms',
      body: compactRequestSchema,
      success: { status: 200, description: 'The compacted conversation', schema: compactedResponseSchema },
      errors: [400, 401, 403, 404, 502, 503],
    }),
    async (req, res) => {
      const principal = principalOf(req);
      const body = req.body;
      const llm = await llmOf(deps, principal, body.model);
      const previous = body.previous_response_id;
      const context = previous != null ? await contextOf(deps, principal, previous) : [];
      const input = inputItems(body.input ?? undefined, context, newId);
      const connection = await deps.llms.getForCall(llm.id);
      if (!connection) throw new NotFound(`LLM ${body.model} not found`);
      // A client that leaves stops the call; a model that takes longer than a silent stream may is gone.
      const abort = new AbortController();
      res.on('close', () => abort.abort());
      const given = PASSED_THROUGH.filter((field) => body[field] != null);
      const compacted = await compactAt(
        clients.of(connection),
        {
          ...(Object.fromEntries(
            given.map((field) => [field, body[field]]),
          ) as Partial<ResponseCompactParams>),
          model: connection.model,
          input: [...context, ...input].map(forProvider) as ResponseCompactParams['input'],
        },
        { signal: abort.signal, timeout: deps.profiles.llm.noProgressMs },
      );
      const usage = {
        input_tokens: compacted.usage?.input_tokens ?? 0,
        output_tokens: compacted.usage?.output_tokens ?? 0,
      };
      req.log.info({ llmId: llm.id, ...usage }, 'conversation compacted');
      res.json({
        id: `cmp_${newId()}`,
        object: 'response.compaction',
        created_at: compacted.created_at ?? Math.floor(Date.now() / 1000),
        output: compacted.output ?? [],
        usage: usageOf(usage),
      });
    },
  );
  return router;
}
