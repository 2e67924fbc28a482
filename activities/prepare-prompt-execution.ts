// PC-5/PC-6/PC-9/PC-10: plans a stored prompt (an EXECUTE reference, a chain step) or the
// gateway's text: its record, TEMPLATE references resolved to text now, EXECUTE references to
// slots (cache hits, or children for the workflow), double-brace variables, and the routed LLMs.
// The plan is stored for rendering; history gets its payload id, the children and the LLM ids.
import type { StoredPrompt } from '../db/prompt-store';
import { instantFromDate } from '../domain/dotnet-datetime';
import { fatalMessage } from '../domain/reference-plan';
import { templateVariableResolver } from '../domain/system-variables';
import {
  FailureType,
  ReferenceFailure,
  workflowIdFor,
  type PreparedPromptExecution,
  type PromptExecutionInput,
  type PromptRequestContent,
} from '../workflows/contracts';
import { createPlanner, routedLlms } from '../services/prompt-planner';
import { fail, planPayloadId, type StoredPlan } from './stored-plan';
import { principalOf, resolveSlots, type ReferenceSlotDeps } from './reference-slots';

export interface PreparePromptExecutionDeps extends ReferenceSlotDeps {
  defaultLlmId: string | undefined;
}

export function createPreparePromptExecution(deps: PreparePromptExecutionDeps) {
  return async function preparePromptExecution(
    input: PromptExecutionInput,
  ): Promise<PreparedPromptExecution> {
    const { executionId } = input;
    if (input.kind !== 'gateway') {
      await deps.executions.ensure({
        id: executionId,
        kind: input.kind,
        api_key_id: input.apiKeyId,
        workflow_id: workflowIdFor(executionId),
        ...(input.parentExecutionId ? { parent_execution_id: input.parentExecutionId } : {}),
        is_internal: true,
        chain_depth: input.kind === 'reference' ? input.depth : 1,
        ...(input.promptId ? { referenced_prompt_id: input.promptId } : {}),
        ...(input.chainId ? { chain_id: input.chainId } : {}),
        ...(input.metadata ? { metadata: input.metadata } : {}),
      });
    }
    const principal = await principalOf(deps, input.apiKeyId);
    const request = input.requestPayloadId
      ? await deps.executions.getPayload<PromptRequestContent>(input.requestPayloadId)
      : { variables: {} };
    if (!request) throw fail(FailureType.NotFound, 'Execution content expired');
    let prompt: StoredPrompt | null = null;
    if (input.promptId) {
      prompt = await deps.prompts.get(input.promptId);
      if (!prompt) throw fail(ReferenceFailure.Invalid, `Prompt ${input.promptId} not found`);
    }
    if (input.nowMs === undefined) throw fail(FailureType.NotFound, 'The execution clock (nowMs) is missing');
    const now = new Date(input.nowMs);
    // Stored prompts have no tools: the same context renders this prompt and its EXECUTE children.
    const context = { now: instantFromDate(now), tools: [], maxLength: deps.limits.renderedPromptBytes };
    const vars = templateVariableResolver(context);
    const childVars = templateVariableResolver(context);
    const planner = createPlanner(deps, principal, {
      variable: (token, forChild) => (forChild ? childVars : vars).variable(token),
    });
    const system = prompt?.systemPrompt ?? null;
    const user = prompt ? prompt.userPrompt : (request.text ?? '');
    // Prompt ids from the top down to this prompt (cycle detection, PC-6).
    const path = prompt
      ? input.ancestors.includes(prompt.promptId)
        ? input.ancestors
        : [...input.ancestors, prompt.promptId]
      : request.sourcePromptId
        ? [request.sourcePromptId]
        : [];
    await planner.preload([system, user]);
    const unresolved = new Set<string>();
    const double = (t: { name: string }) => {
      // Own properties only: `{{constructor}}` names a variable, not Object.prototype's member.
      if (Object.hasOwn(request.variables, t.name)) return request.variables[t.name];
      unresolved.add(t.name);
      return undefined;
    };
    const systemParts = system ? planner.resolveText('systemPrompt', system, path, input.depth, double) : [];
    const userParts = planner.resolveText('userPrompt', user, path, input.depth, double);
    const fatal = planner.fatal;
    if (fatal) throw fail(ReferenceFailure.Fatal, fatalMessage(fatal));
    if (unresolved.size > 0)
      throw fail(
        ReferenceFailure.UnresolvedVariables,
        `Unresolved variable(s): ${[...unresolved].join(', ')}`,
      );

    let llmIds = input.llmIds ?? (prompt ? await routedLlms(deps, prompt) : []);
    if (llmIds.length === 0) {
      const fallback = input.fallbackLlmId ?? deps.defaultLlmId;
      if (!fallback)
        throw fail(
          ReferenceFailure.Invalid,
          `No LLM for prompt ${input.promptId ?? '(gateway)'}: it has no routing and AGENTRY_DEFAULT_LLM_ID is not set`,
        );
      llmIds = [fallback];
    }
    const { cached, children } = await resolveSlots(
      deps,
      executionId,
      input.apiKeyId,
      planner,
      path,
      llmIds[0]!,
    );
    const plan: StoredPlan = {
      system: systemParts,
      user: userParts,
      cached,
      chain: planner.chain,
      problems: planner.problems,
      ...(request.attachments ? { attachments: request.attachments } : {}),
    };
    const id = planPayloadId(executionId);
    await deps.executions.putPayload(id, executionId, 'plan', plan);
    await deps.executions.recordDetails(executionId, {
      variables_instant: now,
      variables_resolved: vars.resolvedNames(),
    });
    const temperature = input.temperature ?? prompt?.temperature ?? undefined;
    return { planPayloadId: id, children, llmIds, ...(temperature !== undefined ? { temperature } : {}) };
  };
}
