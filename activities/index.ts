// Every activity the worker registers, built from narrow dependencies.
import { createBookkeeping, type BookkeepingDeps } from './bookkeeping';
import { createCallModel, type CallModelDeps } from './call-model';
import { createChainSteps, type ChainStepDeps } from './chain-steps';
import { createContentRetention, type ContentRetentionDeps } from './content-retention';
import { createFinishPromptExecution, type FinishPromptExecutionDeps } from './finish-prompt-execution';
import { createIngestionActivities } from './ingest-document';
import type { IngestionDeps } from './ingestion-steps';
import { createPlanAgentReferences, type PlanAgentReferencesDeps } from './plan-agent-references';
import { createPreparePromptExecution, type PreparePromptExecutionDeps } from './prepare-prompt-execution';
import { createRenderPrompt, type RenderDeps } from './render-prompt';
import { createRenderPromptExecution, type RenderPromptExecutionDeps } from './render-prompt-execution';
import { createRetrieveFragments, type RetrievalDeps } from './retrieve-fragments';
import { createStoreTrace, type TraceDeps } from './store-trace';
import { createVectorIndexActivities, type VectorIndexDeps } from './vector-indexes';

type ActivityDeps = CallModelDeps &
  BookkeepingDeps &
  IngestionDeps &
  RetrievalDeps &
  RenderDeps &
  TraceDeps &
  PreparePromptExecutionDeps &
  PlanAgentReferencesDeps &
  RenderPromptExecutionDeps &
  FinishPromptExecutionDeps &
  ChainStepDeps &
  ContentRetentionDeps &
  VectorIndexDeps;

export function createActivities(deps: ActivityDeps) {
  return {
    callModel: createCallModel(deps),
    ...createBookkeeping(deps),
    ...createIngestionActivities(deps),
    retrieveFragments: createRetrieveFragments(deps),
    renderPrompt: createRenderPrompt(deps),
    storeTrace: createStoreTrace(deps),
    preparePromptExecution: createPreparePromptExecution(deps),
    planAgentReferences: createPlanAgentReferences(deps),
    renderPromptExecution: createRenderPromptExecution(deps),
    finishPromptExecution: createFinishPromptExecution(deps),
    ...createChainSteps(deps),
    ...createContentRetention(deps),
    ...createVectorIndexActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
