// Small activities the workflow runs around the model call: the in-band `error` event (run in
// a non-cancellable scope) and the execution record's outcome.
import type { ExecutionStore } from '../db/execution-store';
import type { Relay } from '../infra/relay';
import type { FinishExecutionInput, PublishErrorInput } from '../workflows/contracts';

export interface BookkeepingDeps {
  executions: ExecutionStore;
  relay: Relay;
  contentRetentionSeconds: number;
}

export function createBookkeeping(deps: BookkeepingDeps) {
  return {
    async publishError(input: PublishErrorInput): Promise<void> {
      await deps.relay.publish(input.executionId, {
        type: 'error',
        status: input.status,
        detail: input.detail,
      });
    },
    async finishExecution(input: FinishExecutionInput): Promise<void> {
      const { executionId, ...outcome } = input;
      await deps.executions.finish(executionId, outcome, deps.contentRetentionSeconds);
    },
  };
}
