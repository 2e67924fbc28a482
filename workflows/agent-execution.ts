// SPEC §9.3: one workflow per agent execution. Retrieval per retrieval placeholder in the order
// of the placeholders list (ids and scores only), render-and-validate, the trace when asked
// (before the model call), then the model activity shared with direct queries. Between retrieval
// and render, an agent whose templates hold {{prompt:...}} references plans them and runs a child
// workflow per EXECUTE reference that missed the cache (§9.3 step 2, PC-12).
//
// The shape is the shortest durable one (docs/decisions.md "One workflow task before the model
// call"): every step before the model call is a local activity, so all of them run in the first
// workflow task, which then schedules the model activity for eager dispatch to this worker; the
// record is finished in the workflow task that the model's completion opens anyway. Two workflow
// tasks per execution without references (test/integration/execution-shape.test.ts pins it).
import { executionSteps, modelActivities } from './activity-proxies';
import type { AgentExecutionInput, ExecutionResult, FragmentRef } from './contracts';
import { clockOf } from './execution-clock';
import { withExecutionOutcome } from './execution-outcome';
import { runReferenceChildren } from './reference-children';

export async function agentExecution(input: AgentExecutionInput): Promise<ExecutionResult> {
  const { profiles } = input;
  const steps = executionSteps(profiles);
  const { callModel } = modelActivities(profiles);
  return withExecutionOutcome(input.executionId, profiles, async () => {
    const base = {
      executionId: input.executionId,
      agentId: input.agentId,
      agentVersion: input.agentVersion,
      requestPayloadId: input.requestPayloadId,
    };
    const retrievals: Record<string, FragmentRef[]> = {};
    for (const placeholder of input.retrievalPlaceholders) {
      retrievals[placeholder] = await steps.retrieveFragments.executeWithOptions(
        { summary: `retrieve context {${placeholder}}` },
        [{ ...base, pipelineId: input.pipelineId, placeholder }],
      );
    }
    const nowMs = clockOf(undefined);
    let references = {};
    if (input.hasReferences) {
      const plan = await steps.planAgentReferences({
        executionId: input.executionId,
        agentId: input.agentId,
        agentVersion: input.agentVersion,
        apiKeyId: input.apiKeyId,
        llmId: input.llmId,
        nowMs,
      });
      const { childExecutionIds } = await runReferenceChildren(
        { executionId: input.executionId, apiKeyId: input.apiKeyId, nowMs, profiles },
        plan.children,
      );
      references = { planPayloadId: plan.planPayloadId, childExecutionIds };
    }
    const { renderedPayloadId } = await steps.renderPrompt({ ...base, retrievals, nowMs, ...references });
    if (input.traceId) {
      await steps.storeTrace({
        executionId: input.executionId,
        traceId: input.traceId,
        apiKeyId: input.apiKeyId,
        requestPayloadId: input.requestPayloadId,
        renderedPayloadId,
        retrievals,
      });
    }
    const { answerPayloadId, usage } = await callModel({
      executionId: input.executionId,
      llmId: input.llmId,
      requestPayloadId: renderedPayloadId,
      ...(input.temperature !== undefined ? { temperature: input.temperature } : {}),
      noProgressMs: profiles.llm.noProgressMs,
    });
    return { answerPayloadId, usage };
  });
}
