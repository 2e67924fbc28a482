// What both planning activities (a stored prompt's, an agent's references) do alike: plan as the
// API key that started the execution (PC-8), and turn the planner's EXECUTE slots into cache hits
// (with their `cache` records, PC-11) or children for the workflow to run (PC-5).
import type { ApiKeyStore } from '../db/api-key-store';
import type { ExecutionStore } from '../db/execution-store';
import type { LlmStore } from '../db/llm-store';
import type { Principal } from '../domain/permissions';
import type { Limits } from '../domain/limits';
import type { ReferencePlanner } from '../domain/reference-plan';
import { executeCacheHash, executeCacheKey, type ExecuteCache } from '../infra/execute-cache';
import { FailureType, workflowIdFor, type ReferenceChild } from '../workflows/contracts';
import { routedLlms, type PlanningDeps } from '../services/prompt-planner';
import { derivedId, fail } from './stored-plan';

export interface ReferenceSlotDeps extends PlanningDeps {
  apiKeys: ApiKeyStore;
  executions: ExecutionStore;
  llms: LlmStore;
  executeCache: ExecuteCache;
  /** PC-6 depth, and the rendered-prompt limit that bounds a variable's expansion (SPEC §18). */
  limits: Pick<Limits, 'chainDepth' | 'renderedPromptBytes'>;
}

/** The principal of the key that started the execution; gone keys fail it for good. */
export async function principalOf(
  deps: Pick<ReferenceSlotDeps, 'apiKeys'>,
  apiKeyId: string,
): Promise<Principal> {
  const key = await deps.apiKeys.findCredentials(apiKeyId);
  if (!key) throw fail(FailureType.NotFound, 'The API key that started the execution no longer exists');
  return { keyId: apiKeyId, permissions: key.permissions };
}

/**
 * The EXECUTE slots of a plan: cache hits become answers (and `cache` records, PC-11), the
 * others children to run. `fallbackLlmId` is the LLM of slots whose prompt has no routing.
 */
export async function resolveSlots(
  deps: ReferenceSlotDeps,
  executionId: string,
  apiKeyId: string,
  planner: ReferencePlanner,
  ancestors: string[],
  fallbackLlmId: string,
): Promise<{ cached: Record<number, string>; children: ReferenceChild[] }> {
  const cached: Record<number, string> = {};
  const children: ReferenceChild[] = [];
  for (const slot of planner.slots) {
    // A slot exists only for a prompt the planner loaded.
    const prompt = planner.loaded(slot.promptId)!;
    const llmIds = await routedLlms(deps, prompt);
    const model = (await deps.llms.get(llmIds[0] ?? fallbackLlmId))?.model ?? '';
    const hash = executeCacheHash(JSON.stringify(slot.resolved), model, prompt.temperature);
    const cacheKey = executeCacheKey(slot.promptId, hash, slot.depth);
    const childId = derivedId(executionId, `slot:${slot.slot}`);
    const hit = await deps.executeCache.get(cacheKey);
    if (hit) {
      cached[slot.slot] = hit.text;
      await deps.executions.ensure(
        {
          id: childId,
          kind: 'reference',
          api_key_id: apiKeyId,
          workflow_id: workflowIdFor(childId),
          parent_execution_id: executionId,
          is_internal: true,
          chain_depth: slot.depth,
          referenced_prompt_id: slot.promptId,
        },
        { status: 'succeeded', selected_provider: 'cache' },
      );
      continue;
    }
    children.push({
      slot: slot.slot,
      executionId: childId,
      promptId: slot.promptId,
      depth: slot.depth,
      ancestors: [...ancestors, slot.promptId],
      cacheKey,
      fallbackLlmId,
    });
  }
  return { cached, children };
}
