// SPEC §12 PC-5/PC-9/PC-10, §13 CH-2: one stored prompt (an EXECUTE reference, a chain step) or
// the gateway's text as a durable workflow. Plan (references, variables, routing, cache) →
// a child workflow per EXECUTE reference that missed the cache → render → the model, trying the
// routed LLMs in order (the next after the previous failed through all its retries) → record
// the LLM that answered and cache a reference's answer.
import { CancellationScope, executeChild, proxyLocalActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import {
  NON_RETRYABLE,
  workflowIdFor,
  type ExecutionProfiles,
  type PromptExecutionInput,
  type PromptExecutionResult,
  type ReferenceChild,
  type Usage,
} from './contracts';
import { describeFailure } from './describe-failure';
import { modelActivities, withExecutionOutcome } from './llm-query';
import { retryPolicy } from './retry-policy';
import { searchAttributePairs } from './search-attributes';

type Steps = Pick<
  Activities,
  'preparePromptExecution' | 'renderPromptExecution' | 'finishPromptExecution' | 'planAgentReferences'
>;

/** Planning, rendering and recording are short database steps: local activities (DESIGN §6). */
export function promptSteps(profiles: ExecutionProfiles) {
  return proxyLocalActivities<Steps>({
    startToCloseTimeout: profiles.bookkeeping.startToCloseMs * 3,
    retry: retryPolicy(profiles.bookkeeping),
  });
}

/** The clock of `{{foundationallm:current_datetime_utc}}`: identical on retries and replays (PV-2). */
export const clockOf = (nowMs: number | undefined): number => nowMs ?? workflowInfo().startTime.getTime();

/**
 * PC-5: the workflow (not an activity) runs a child per EXECUTE reference, one after another in
 * slot order; a failed child fails the parent with the child's failure.
 */
export async function runReferenceChildren(
  parent: { executionId: string; apiKeyId: string; nowMs: number; profiles: ExecutionProfiles },
  children: readonly ReferenceChild[],
): Promise<{ childExecutionIds: Record<number, string>; usage: Usage }> {
  const done: Record<number, string> = {};
  const usage: Usage = { input_tokens: 0, output_tokens: 0 };
  for (const child of children) {
    const input: PromptExecutionInput = {
      executionId: child.executionId,
      kind: 'reference',
      apiKeyId: parent.apiKeyId,
      parentExecutionId: parent.executionId,
      promptId: child.promptId,
      depth: child.depth,
      ancestors: child.ancestors,
      fallbackLlmId: child.fallbackLlmId,
      cacheKey: child.cacheKey,
      nowMs: parent.nowMs,
      profiles: parent.profiles,
    };
    const result = await executeChild(promptExecution, {
      workflowId: workflowIdFor(child.executionId),
      args: [input],
      typedSearchAttributes: searchAttributePairs({ ApiKeyId: parent.apiKeyId }),
    });
    done[child.slot] = child.executionId;
    addUsage(usage, result.totalUsage ?? result.usage);
  }
  return { childExecutionIds: done, usage };
}

function addUsage(sum: Usage, more: Usage): Usage {
  sum.input_tokens += more.input_tokens;
  sum.output_tokens += more.output_tokens;
  return sum;
}

/** PC-10: the routed LLMs in order; the next one only after a retryable failure of the previous. */
async function callRouted(
  input: PromptExecutionInput,
  llmIds: readonly string[],
  call: { requestPayloadId: string; temperature?: number; doneExtraPayloadId?: string },
) {
  const { callModel } = modelActivities(input.profiles);
  for (const [i, llmId] of llmIds.entries()) {
    try {
      const result = await callModel({
        executionId: input.executionId,
        llmId,
        requestPayloadId: call.requestPayloadId,
        noProgressMs: input.profiles.llm.noProgressMs,
        attemptOffset: i * input.profiles.llm.maximumAttempts,
        ...(call.temperature !== undefined ? { temperature: call.temperature } : {}),
        ...(call.doneExtraPayloadId ? { doneExtraPayloadId: call.doneExtraPayloadId } : {}),
      });
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
  const steps = promptSteps(input.profiles);
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
