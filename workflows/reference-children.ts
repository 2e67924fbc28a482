// PC-5: the workflow (not an activity) runs a `promptExecution` child per EXECUTE reference that
// missed the cache, one after another in slot order; a failed child fails the parent with the
// child's failure. Shared by prompt and agent executions.
import { executeChild } from '@temporalio/workflow';
import {
  workflowIdFor,
  type ExecutionProfiles,
  type PromptExecutionInput,
  type PromptExecutionWorkflow,
  type ReferenceChild,
  type Usage,
} from './contracts';
import { searchAttributePairs } from './search-attributes';
import { workflowMetadata } from './user-metadata';

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
    // By name and contract: the workflow's module imports this one.
    const result = await executeChild<PromptExecutionWorkflow>('promptExecution', {
      workflowId: workflowIdFor(child.executionId),
      args: [input],
      typedSearchAttributes: searchAttributePairs({ ApiKeyId: parent.apiKeyId }),
      ...workflowMetadata({
        kind: 'reference',
        prompt: { id: child.promptId },
        parentExecutionId: parent.executionId,
      }),
    });
    done[child.slot] = child.executionId;
    addUsage(usage, result.totalUsage ?? result.usage);
  }
  return { childExecutionIds: done, usage };
}

/** Adds `more` into `sum` and returns it. */
export function addUsage(sum: Usage, more: Usage): Usage {
  sum.input_tokens += more.input_tokens;
  sum.output_tokens += more.output_tokens;
  return sum;
}
