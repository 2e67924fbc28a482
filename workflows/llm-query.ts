// LLM-4: a direct query as a workflow: the model activity, then the record. On failure or
// cancellation the workflow publishes the in-band `error` event and records the outcome in a
// non-cancellable scope, then fails, so the API and re-attaching readers see the same end.
import { modelActivities } from './activity-proxies';
import type { ExecutionResult, LlmQueryInput } from './contracts';
import { withExecutionOutcome } from './execution-outcome';

export async function llmQuery(input: LlmQueryInput): Promise<ExecutionResult> {
  const { callModel } = modelActivities(input.profiles);
  return withExecutionOutcome(input.executionId, input.profiles, async () => {
    const { answerPayloadId, usage } = await callModel({
      executionId: input.executionId,
      llmId: input.llmId,
      requestPayloadId: input.requestPayloadId,
      ...(input.temperature !== undefined ? { temperature: input.temperature } : {}),
      noProgressMs: input.profiles.llm.noProgressMs,
    });
    return { answerPayloadId, usage };
  });
}
