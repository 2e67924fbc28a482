// SPEC §12 PC-5/PC-9/PC-10, §13 CH-2: one stored prompt (an EXECUTE reference, a chain step) or
// the gateway's text as a durable workflow. Plan (references, variables, routing, cache) →
// a child workflow per EXECUTE reference that missed the cache → render → the model, trying the
// routed LLMs in order (the next after the previous failed through all its retries) → record
// the LLM that answered and cache a reference's answer.
import { CancellationScope } from '@temporalio/workflow';
import { executionSteps, modelActivities } from './activity-proxies';
import {
  NON_RETRYABLE,
  type PromptExecutionInput,
  type PromptExecutionResult,
  type PromptExecutionWorkflow,
} from './contracts';
import { describeFailure } from './describe-failure';
import { clockOf } from './execution-clock';
import { withExecutionOutcome } from './execution-outcome';
import { addUsage, runReferenceChildren } from './reference-children';

/** PC-10: the routed LLMs in order; the next one only after a retryable failure of the previous. */
async function callRouted(
  input: PromptExecutionInput,
  llmIds: readonly string[],
  call: { requestPayloadId: string; temperature?: number; doneExtraPayloadId?: string },
) {
  const { callModel } = modelActivities(input.profiles);
  for (const [i, llmId] of llmIds.entries()) {
    try {
      const result = await callModel(
        {
          executionId: input.executionId,
          llmId,
          requestPayloadId: call.requestPayloadId,
          noProgressMs: input.profiles.llm.noProgressMs,
          attemptOffset: i * input.profiles.llm.maximumAttempts,
          ...(call.temperature !== undefined ? { temperature: call.temperature } : {}),
          ...(call.doneExtraPayloadId ? { doneExtraPayloadId: call.doneExtraPayloadId } : {}),
        },
        { index: i, of: llmIds.length },
      );
      return { ...result, llmId };
    } catch (err) {
      const failure = describeFailure(err);
      const last = i === llmIds.length - 1;
      if (
        last ||
        failure.cancelled ||
        NON_RETRYABLE.includes(failure.type) ||
        !failure.type.startsWith('Llm.')
      )
        throw err;
    }
  }
  throw new Error('No LLM to call');
}

export async function promptExecution(input: PromptExecutionInput): Promise<PromptExecutionResult> {
  const steps = executionSteps(input.profiles);
  const nowMs = clockOf(input.nowMs);
  return withExecutionOutcome(input.executionId, input.profiles, async () => {
    const prepared = await steps.preparePromptExecution({ ...input, nowMs });
    const { childExecutionIds, usage: childUsage } = await runReferenceChildren(
      { executionId: input.executionId, apiKeyId: input.apiKeyId, nowMs, profiles: input.profiles },
      prepared.children,
    );
    const rendered = await steps.renderPromptExecution({
      executionId: input.executionId,
      planPayloadId: prepared.planPayloadId,
      childExecutionIds,
      withChain: input.kind === 'gateway',
    });
    const answer = await callRouted(input, prepared.llmIds, {
      requestPayloadId: rendered.renderedPayloadId,
      ...(prepared.temperature !== undefined ? { temperature: prepared.temperature } : {}),
      ...(rendered.chainPayloadId ? { doneExtraPayloadId: rendered.chainPayloadId } : {}),
    });
    // The answer is stored and `done` published: a late cancellation must not lose its record
    // or its cache entry.
    const { provider, model } = await CancellationScope.nonCancellable(() =>
      steps.finishPromptExecution({
        executionId: input.executionId,
        llmId: answer.llmId,
        answerPayloadId: answer.answerPayloadId,
        // The cache key names the first routed LLM's model: a fallback's answer is not cached (PC-5, PC-10).
        ...(input.cacheKey && answer.llmId === prepared.llmIds[0] ? { cacheKey: input.cacheKey } : {}),
      }),
    );
    return {
      answerPayloadId: answer.answerPayloadId,
      usage: answer.usage,
      totalUsage: addUsage({ ...answer.usage }, childUsage),
      llmId: answer.llmId,
      provider,
      model,
      ...(rendered.chainPayloadId ? { chainPayloadId: rendered.chainPayloadId } : {}),
    };
  });
}

/** The contract reference children start it by (workflows/reference-children.ts); types only. */
type _Contract<T extends PromptExecutionWorkflow> = T;
type _PromptExecutionContract = _Contract<typeof promptExecution>;
