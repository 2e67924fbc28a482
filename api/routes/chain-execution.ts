// POST /api/v1/chains/{chainId}/execute (SPEC §13 CH-2..CH-5, DX-4, DX-5): the guardrails admit
// the execution (CH-4), the `chainExecution` workflow runs the steps, and the route answers with
// the CH-3 report once the workflow ended (200 also when a step failed; 429 when the token
// ceiling stopped it). The request and the chain's definition are one encrypted payload.
import { WorkflowNotFoundError } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import type { Router } from 'express';
import type { NewExecution } from '../../db/execution-store';
import type { ChainStore, StoredChain } from '../../db/chain-store';
import type { PromptStore } from '../../db/prompt-store';
import { InvalidInput, NotFound, TooManyRequests } from '../../domain/errors';
import type { ChainRateLimiter } from '../../infra/chain-rate-limiter';
import type { Config } from '../../infra/config';
import {
  CHAIN_GUARDRAIL_MESSAGE,
  type ChainExecutionInput,
  type ChainExecutionResult,
  type ChainRequestContent,
  type StoredChainAnswer,
} from '../../workflows/contracts';
import { principalOf } from '../auth';
import { loadChain } from '../chain-access';
import { executionOutcome } from '../execution-response';
import { IDEMPOTENCY_HEADER_SPEC, withIdempotency, type IdempotencyDeps } from '../idempotency';
import type { RouteRegistry } from '../route-registry';
import { chainReportSchema, executeChainSchema, type ExecuteChainBody } from '../schemas/chains';
import { startExecution, type ExecutionIds, type StartExecutionDeps } from '../start-execution';

export type ChainExecutionDeps = {
  chains: ChainStore;
  prompts: PromptStore;
  chainRateLimiter: ChainRateLimiter;
  defaultLlmId: string | undefined;
  config: Pick<Config, 'contentRetentionSeconds'>;
} & StartExecutionDeps &
  IdempotencyDeps;

/** A running chain record this old is checked against its workflow before admission (CH-4). */
const RECONCILE_AFTER_MS = 10_000;

/** Seconds a client refused for concurrency should wait: a step takes about that long. */
const CONCURRENCY_RETRY_AFTER_SECONDS = 1;

/** Retry-After of a token-ceiling refusal: the same request would pass the ceiling again. */
const MAX_TOKENS_RETRY_AFTER_SECONDS = 60;
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;

/** CH-5: the caller's W3C trace when it sent a valid `traceparent`, else a new trace id. */
function traceIdOf(header: string | undefined): string {
  const m = header ? TRACEPARENT.exec(header.trim()) : null;
  if (m && m[1] !== 'ff' && !/^0+$/.test(m[2]!) && !/^0+$/.test(m[3]!)) return m[2]!;
  return randomBytes(16).toString('hex');
}

/** Every step needs an LLM: its prompt's routing, else the default LLM (CH-2). */
async function checkRouting(deps: ChainExecutionDeps, chain: StoredChain): Promise<void> {
  if (deps.defaultLlmId) return;
  const prompts = await deps.prompts.getMany(chain.steps.map((s) => s.promptId));
  const unrouted = chain.steps.filter((s) => {
    const p = prompts.get(s.promptId);
    return !p?.routingPolicyId && !p?.customGatewayId;
  });
  if (unrouted.length > 0)
    throw new InvalidInput(
      `No LLM for step(s) ${unrouted.map((s) => `${s.order} (prompt ${s.promptId})`).join(', ')}: ` +
        'the prompt has no routing and AGENTRY_DEFAULT_LLM_ID is not set',
    );
}

export function chainExecutionRoute(routes: RouteRegistry, router: Router, deps: ChainExecutionDeps): void {
  /**
   * CH-4: the record is written in the admission transaction (the chain row locked, its running
   * executions counted, a rate point taken), which commits before the workflow starts, so the next
   * admission counts this one and the workflow never runs ahead of its record. 429 when
   * `maxConcurrency` executions are running or the minute's executions are taken.
   */
  const admit =
    (chain: StoredChain) =>
    (execution: NewExecution, request: { payloadId: string; content: unknown }): Promise<void> =>
      deps.chains.admit(chain.id, async (trx, { running, maxConcurrency }) => {
        if (running >= maxConcurrency)
          throw new TooManyRequests(CHAIN_GUARDRAIL_MESSAGE, CONCURRENCY_RETRY_AFTER_SECONDS).withDetails([
            { reason: 'maxConcurrency' },
          ]);
        const perMinute = chain.guardrails.rateLimitPerMinute;
        if (perMinute !== undefined) {
          const wait = await deps.chainRateLimiter.take(chain.id, perMinute);
          if (wait !== null)
            throw new TooManyRequests(CHAIN_GUARDRAIL_MESSAGE, wait).withDetails([{ reason: 'rateLimit' }]);
        }
        await deps.executions.create(execution, request, trx);
      });

  /**
   * CH-4 counts running records: one whose workflow has closed without recording its end (the
   * API died before starting it, an operator terminated it) must not hold a slot forever. Its
   * record takes the workflow's outcome; a Temporal error leaves it for the next request.
   */
  const releaseClosed = async (chainId: string): Promise<void> => {
    const suspects = await deps.executions.runningChainExecutions(
      chainId,
      new Date(Date.now() - RECONCILE_AFTER_MS),
    );
    for (const record of suspects) {
      let status: 'succeeded' | 'failed' | 'cancelled' | undefined;
      try {
        const described = await deps.temporal.workflow.getHandle(record.workflow_id).describe();
        const name = described.status.name;
        if (name !== 'RUNNING')
          status = name === 'COMPLETED' ? 'succeeded' : name === 'CANCELLED' ? 'cancelled' : 'failed';
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) status = 'failed';
        else return;
      }
      if (status)
        await deps.executions.finish(
          record.id,
          { status, ...(status === 'failed' ? { error: { status: 503, type: 'Infra.Unavailable' } } : {}) },
          deps.config.contentRetentionSeconds,
        );
    }
  };

  const admitAndStart = async (
    chain: StoredChain,
    apiKeyId: string,
    content: ChainRequestContent,
    stopOnError: boolean,
    traceId: string,
    ids: ExecutionIds,
  ): Promise<string> => {
    try {
      return await startExecution<ChainExecutionInput>(
        deps,
        {
          writeRecord: admit(chain),
          record: {
            kind: 'chain',
            api_key_id: apiKeyId,
            chain_id: chain.id,
            chain_depth: 0,
            metadata: { traceId },
          },
          content,
          workflowType: 'chainExecution',
          args: ({ executionId, requestPayloadId, profiles }) => ({
            executionId,
            chainId: chain.id,
            apiKeyId,
            requestPayloadId,
            steps: content.steps.map((s) => ({ order: s.order, promptId: s.promptId })),
            stopOnError,
            ...(chain.guardrails.maxTokensPerExecution !== undefined
              ? { maxTokensPerExecution: chain.guardrails.maxTokensPerExecution }
              : {}),
            traceId,
            profiles,
          }),
          searchAttributes: { ChainId: chain.id, ApiKeyId: apiKeyId },
          names: { chain: chain.name },
        },
        ids,
      );
    } catch (err) {
      // Admitted but not started (the database or Temporal failed): the rate point is given back.
      const perMinute = chain.guardrails.rateLimitPerMinute;
      if (perMinute !== undefined && !(err instanceof TooManyRequests))
        await deps.chainRateLimiter.giveBack(chain.id, perMinute);
      throw err;
    }
  };

  routes.add<ExecuteChainBody>(
    router,
    {
      method: 'post',
      path: '/api/v1/chains/:chainId/execute',
      summary:
        'Run a stored chain and answer with every step, the context and the summed tokens (CH-2, CH-3)',
      tag: 'Chains',
      permission: 'execute:chains',
      body: executeChainSchema,
      headers: [
        IDEMPOTENCY_HEADER_SPEC,
        {
          name: 'traceparent',
          description: 'W3C trace context the steps join (CH-5); a new trace otherwise',
        },
      ],
      success: {
        status: 200,
        description: 'The CH-3 report (also when a step failed)',
        schema: chainReportSchema,
      },
      errors: [400, 401, 403, 404, 429, 499, 503],
    },
    async (req, res) => {
      const principal = principalOf(req);
      const chain = await loadChain(deps.chains, principal, req.params.chainId, 'execute');
      await checkRouting(deps, chain);
      const body = req.body;
      const content: ChainRequestContent = {
        inputs: Object.fromEntries(Object.entries(body.inputs ?? {}).map(([k, v]) => [k, String(v)])),
        attachments: body.attachments ?? [],
        steps: chain.steps,
        stepAttachments: (chain.metadata.stepAttachments as ChainRequestContent['stepAttachments']) ?? {},
      };
      const stopOnError = body.options?.stopOnError ?? chain.stopOnError;
      const traceId = traceIdOf(req.header('traceparent'));
      await releaseClosed(chain.id);
      const { executionId } = await withIdempotency(deps, req, `chain:${chain.id}`, [req.body], (ids) =>
        admitAndStart(chain, principal.keyId, content, stopOnError, traceId, ids),
      );
      res.set('x-agentry-execution-id', executionId);
      const result = await executionOutcome<ChainExecutionResult>(deps, executionId);
      const answer = await deps.executions.getPayload<StoredChainAnswer>(result.answerPayloadId);
      if (!answer) throw new NotFound(`The result of chain execution ${executionId} is no longer retained`);
      if (result.guardrail)
        throw new TooManyRequests(CHAIN_GUARDRAIL_MESSAGE, MAX_TOKENS_RETRY_AFTER_SECONDS).withDetails([
          { reason: result.guardrail },
        ]);
      res.json(answer.report);
    },
  );
}
