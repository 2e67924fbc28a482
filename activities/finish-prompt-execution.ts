// PC-10/PC-11/PC-5: finishes a prompt execution: records the LLM that answered (and its
// provider) and caches a reference's answer under the key planning computed.
import type { ExecutionStore } from '../db/execution-store';
import type { LlmStore } from '../db/llm-store';
import type { ExecuteCache } from '../infra/execute-cache';
import type { StoredAnswer } from '../services/answers';

export interface FinishPromptExecutionDeps {
  executions: ExecutionStore;
  llms: LlmStore;
  executeCache: ExecuteCache;
}

export function createFinishPromptExecution(deps: FinishPromptExecutionDeps) {
  return async function finishPromptExecution(input: {
    executionId: string;
    llmId: string;
    answerPayloadId: string;
    cacheKey?: string;
  }): Promise<{ provider: string; model: string }> {
    const llm = await deps.llms.get(input.llmId);
    const provider = llm?.provider ?? 'unknown';
    const model = llm?.model ?? 'unknown';
    await deps.executions.recordDetails(input.executionId, {
      llm_id: input.llmId,
      selected_provider: provider,
    });
    if (input.cacheKey) {
      const stored = await deps.executions.getPayload<StoredAnswer>(input.answerPayloadId);
      if (stored)
        await deps.executeCache.set(input.cacheKey, {
          text: stored.text,
          usage: stored.usage,
          provider,
          model,
        });
    }
    return { provider, model };
  };
}
