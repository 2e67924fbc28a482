// Every activity the worker registers, built from narrow dependencies.
import { createBookkeeping, type BookkeepingDeps } from './bookkeeping';
import { createCallModel, type CallModelDeps } from './call-model';

export type ActivityDeps = CallModelDeps & BookkeepingDeps;

export function createActivities(deps: ActivityDeps) {
  return { callModel: createCallModel(deps), ...createBookkeeping(deps) };
}

export type Activities = ReturnType<typeof createActivities>;
