// POST /api/gateway/execute (SPEC §12 PC-9): a prompt text with `{{prompt:}}` references and
// `{{name}}` variables, run as a `promptExecution` workflow on the x-llm-id LLM, else the source
// prompt's routing, else the default LLM. JSON `{response, executionChain, referenceErrors}`, or
// the §9.5 formats whose final `done` event carries executionChain and referenceErrors.
import { Router, type Request } from 'express';
import type { PlanningDeps } from '../../services/prompt-planner';
import { routedLlms, promptAccess } from '../../services/prompt-planner';
import { answerPayloadId, type StoredAnswer } from '../../services/answers';
import type { LlmStore } from '../../db/llm-store';
import type { StoredPrompt } from '../../db/prompt-store';
import { Forbidden, InvalidInput, NotFound } from '../../domain/errors';
import type { Limits } from '../../domain/limits';
import { canOnAll, type Principal } from '../../domain/permissions';
import { runtimeVariables } from '../../domain/prompt-analysis';
import { fatalMessage } from '../../domain/reference-plan';
import { isUuid } from '../../infra/ids';
import type {
  PromptExecutionInput,
  PromptExecutionResult,
  PromptRequestContent,
} from '../../workflows/contracts';
import { loadAuthorized } from '../access';
import { principalOf } from '../auth';
import {
  executionOutcome,
  formatOf,
  respondWithExecution,
  type ExecutionResponseDeps,
} from '../execution-response';
import { IDEMPOTENCY_HEADER_SPEC, withIdempotency, type IdempotencyDeps } from '../idempotency';
import { findReferenceProblems } from '../prompt-references';
import type { RouteRegistry } from '../route-registry';
import { gatewayExecuteSchema, type GatewayExecuteBody } from '../schemas/prompts';
import { startExecution, type ExecutionIds, type StartExecutionDeps } from '../start-execution';
import { validate } from '../validation';

type GatewayDeps = PlanningDeps &
  StartExecutionDeps &
  ExecutionResponseDeps &
  IdempotencyDeps & {
    llms: LlmStore;
    defaultLlmId: string | undefined;
    limits: Pick<Limits, 'templateBytes'>;
  };

/** PC-9: x-llm-id, else the source prompt's routing, else the default LLM, else 400. */
async function llmsFor(
  deps: GatewayDeps,
  req: Request,
  principal: Principal,
  body: GatewayExecuteBody,
): Promise<string[]> {
  // The source prompt names the root of the reference graph (cycles) whatever picks the LLM.
  let source: StoredPrompt | null = null;
  if (body.sourcePromptId) {
    source = await deps.prompts.get(body.sourcePromptId);
    if (!source || !promptAccess(principal, source, 'TEMPLATE'))
      throw new InvalidInput(`sourcePromptId: Prompt ${body.sourcePromptId} not found`);
  }
  const header = req.header('x-llm-id');
  if (header !== undefined) {
    if (!isUuid(header)) throw new InvalidInput(`Header x-llm-id is not a valid id: ${header}`);
    const llm = await loadAuthorized(principal, 'execute', 'llms', 'LLM', header, (id) => deps.llms.get(id));
    return [llm.id];
  }
  if (source) {
    const routed = await routedLlms(deps, source);
    if (routed.length > 0) return routed;
  }
  if (deps.defaultLlmId) return [deps.defaultLlmId];
  throw new InvalidInput(
    'No LLM for this execution: send x-llm-id, route the source prompt, or set AGENTRY_DEFAULT_LLM_ID',
  );
}

export function gatewayRoutes(routes: RouteRegistry, deps: GatewayDeps): Router {
  const router = Router();
  const bodySchema = gatewayExecuteSchema(deps.limits);
  routes.add(
    router,
    {
      method: 'post',
      path: '/api/gateway/execute',
      summary: 'Execute a prompt text with {{prompt:id}} references and {{name}} variables (PC-9)',
      tag: 'Prompt library',
      permission: 'execute:prompts',
      body: bodySchema,
      deferBodyValidation: true,
      headers: [IDEMPOTENCY_HEADER_SPEC],
      success: {
        status: 200,
        description: '{"response", "executionChain", "referenceErrors"}; with stream, NDJSON or SSE',
        contentTypes: ['application/json', 'application/x-ndjson', 'text/event-stream'],
      },
      errors: [400, 401, 403, 404, 409, 502, 503],
    },
    async (req, res) => {
      const principal = principalOf(req);
      if (!canOnAll(principal, 'execute', 'prompts'))
        throw new Forbidden('API key lacks execute:prompts permission');
      const body = validate<GatewayExecuteBody>(bodySchema, req.body);
      const variables = body.variables ?? {};
      const missing = runtimeVariables(body.prompt).filter((name) => !Object.hasOwn(variables, name));
      if (missing.length > 0) throw new InvalidInput(`Unresolved variable(s): ${missing.join(', ')}`);
      const llmIds = await llmsFor(deps, req, principal, body);
      // PC-6: depth and cycles are 400 before anything runs; other reference errors are reported.
      const { problems } = await findReferenceProblems(
        deps,
        principal,
        { prompt: body.prompt },
        { atExecution: true, ...(body.sourcePromptId ? { selfId: body.sourcePromptId } : {}) },
      );
      const fatal = problems.find((p) => p.fatal);
      if (fatal) throw new InvalidInput(fatalMessage(fatal));
      const content: PromptRequestContent = {
        text: body.prompt,
        variables,
        ...(body.sourcePromptId ? { sourcePromptId: body.sourcePromptId } : {}),
      };
      const start = (ids: ExecutionIds) =>
        startExecution<PromptExecutionInput>(
          deps,
          {
            record: { kind: 'gateway', api_key_id: principal.keyId, llm_id: llmIds[0]! },
            content,
            workflowType: 'promptExecution',
            args: ({ executionId, requestPayloadId, profiles }) => ({
              executionId,
              kind: 'gateway',
              apiKeyId: principal.keyId,
              requestPayloadId,
              depth: 0,
              ancestors: [],
              llmIds,
              profiles,
              ...(body.temperature !== undefined ? { temperature: body.temperature } : {}),
            }),
            searchAttributes: { LlmId: llmIds[0], ApiKeyId: principal.keyId },
          },
          ids,
        );
      const { executionId } = await withIdempotency(
        deps,
        req,
        'gateway',
        // DX-4: the body and the x-llm-id header, not what routing resolved them to.
        [req.body, req.header('x-llm-id') ?? null],
        start,
      );
      if (body.stream !== undefined && body.stream !== false) {
        await respondWithExecution(deps, req, res, executionId, formatOf(body.stream));
        return;
      }
      const result = await executionOutcome<PromptExecutionResult>(deps, executionId);
      const [answer, chain] = await Promise.all([
        deps.executions.getPayload<StoredAnswer>(answerPayloadId(executionId)),
        result.chainPayloadId
          ? deps.executions.getPayload<{ executionChain: unknown[]; referenceErrors: unknown[] }>(
              result.chainPayloadId,
            )
          : null,
      ]);
      if (!answer) throw new NotFound(`The answer of execution ${executionId} is no longer retained`);
      res.set('x-agentry-execution-id', executionId).json({
        response: answer.text,
        executionChain: chain?.executionChain ?? [],
        referenceErrors: chain?.referenceErrors ?? [],
      });
    },
  );
  return router;
}
