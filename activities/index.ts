// Every activity the worker registers, built from narrow dependencies.
import { createBookkeeping, type BookkeepingDeps } from './bookkeeping';
import { createCallModel, type CallModelDeps } from './call-model';
import { createChainSteps, type ChainStepDeps } from './chain-steps';
import { createIngestionActivities, type IngestionDeps } from './ingest-document';
import { createPromptExecutionActivities, type PromptExecutionDeps } from './prompt-execution';
import { createRenderPrompt, type RenderDeps } from './render-prompt';
import { createRetrieveFragments, type RetrievalDeps } from './retrieve-fragments';
import { createStoreTrace, type TraceDeps } from './store-trace';

export type ActivityDeps = CallModelDeps &
  BookkeepingDeps &
  IngestionDeps &
  RetrievalDeps &
  RenderDeps &
  TraceDeps &
  PromptExecutionDeps &
  ChainStepDeps;

export function createActivities(deps: ActivityDeps) {
  return {
    callModel: createCallModel(deps),
    ...createBookkeeping(deps),
    ...createIngestionActivities(deps),
    retrieveFragments: createRetrieveFragments(deps),
    renderPrompt: createRenderPrompt(deps),
    storeTrace: createStoreTrace(deps),
    ...createPromptExecutionActivities(deps),
    ...createChainSteps(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
