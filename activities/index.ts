// Every activity the worker registers, built from narrow dependencies.
import { createBookkeeping, type BookkeepingDeps } from './bookkeeping';
import { createCallModel, type CallModelDeps } from './call-model';
import { createIngestionActivities, type IngestionDeps } from './ingest-document';
import { createRenderPrompt, type RenderDeps } from './render-prompt';
import { createRetrieveFragments, type RetrievalDeps } from './retrieve-fragments';
import { createStoreTrace, type TraceDeps } from './store-trace';

export type ActivityDeps = CallModelDeps &
  BookkeepingDeps &
  IngestionDeps &
  RetrievalDeps &
  RenderDeps &
  TraceDeps;

export function createActivities(deps: ActivityDeps) {
  return {
    callModel: createCallModel(deps),
    ...createBookkeeping(deps),
    ...createIngestionActivities(deps),
    retrieveFragments: createRetrieveFragments(deps),
    renderPrompt: createRenderPrompt(deps),
    storeTrace: createStoreTrace(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
