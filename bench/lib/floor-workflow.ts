// The bare-Temporal floor's workflow (bundled by bench/lib/floor-worker.ts): the target shape of
// an agent execution with no-op activities. One workflow task whose local activities do
// retrieval, render and (when the benchmark asks for tracing) the trace, then one normal
// activity for the model call (its first line stands for the first token), then the record of the
// outcome as a local activity, as the product's agent execution ends.
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';

export interface FloorInput {
  executionId: string;
  agentId: string;
  pipelineId: string;
  llmId: string;
  requestPayloadId: string;
  placeholders: string[];
  trace: boolean;
}

export interface FloorActivities {
  retrieve(input: { executionId: string; placeholder: string }): Promise<{ id: string; score: number }[]>;
  render(input: { executionId: string; fragments: number }): Promise<{ renderedPayloadId: string }>;
  trace(input: { executionId: string; renderedPayloadId: string }): Promise<void>;
  callModel(input: { executionId: string; requestPayloadId: string }): Promise<{ answerPayloadId: string }>;
  finish(input: { executionId: string; answerPayloadId: string }): Promise<void>;
}

const retry = { maximumAttempts: 3, initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10s' };
const local = proxyLocalActivities<FloorActivities>({ startToCloseTimeout: '30s', retry });
// The product's model activity has a heartbeat timeout too.
const model = proxyActivities<FloorActivities>({
  startToCloseTimeout: '120s',
  heartbeatTimeout: '20s',
  retry,
});

export async function floorExecution(input: FloorInput): Promise<{ answerPayloadId: string }> {
  let fragments = 0;
  for (const placeholder of input.placeholders) {
    fragments += (await local.retrieve({ executionId: input.executionId, placeholder })).length;
  }
  const { renderedPayloadId } = await local.render({ executionId: input.executionId, fragments });
  if (input.trace) await local.trace({ executionId: input.executionId, renderedPayloadId });
  const answer = await model.callModel({
    executionId: input.executionId,
    requestPayloadId: renderedPayloadId,
  });
  await local.finish({ executionId: input.executionId, answerPayloadId: answer.answerPayloadId });
  return answer;
}
