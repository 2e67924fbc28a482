// Every activity the worker registers, built from narrow dependencies.
import { createBookkeeping, type BookkeepingDeps } from './bookkeeping';
import { createCallModel, type CallModelDeps } from './call-model';
import { createIngestionActivities, type IngestionDeps } from './ingest-document';

export type ActivityDeps = CallModelDeps & BookkeepingDeps & IngestionDeps;

export function createActivities(deps: ActivityDeps) {
  return { callModel: createCallModel(deps), ...createBookkeeping(deps), ...createIngestionActivities(deps) };
}

export type Activities = ReturnType<typeof createActivities>;
