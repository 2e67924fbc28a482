// Small activities the workflow runs around the model call: the in-band `error` event (run in
// a non-cancellable scope; for a cancellation it also stops the execution's model streams at once,
// infra/stop-notices.ts) and the execution record's outcome.
import type { ExecutionStore } from '../db/execution-store';
import type { Relay } from '../infra/relay';
import type { StopNotices } from '../infra/stop-notices';
import type { FinishExecutionInput, PublishErrorInput } from '../workflows/contracts';

export interface BookkeepingDeps {
  executions: ExecutionStore;
  relay: Relay;
  stopNotices: StopNotices;
  contentRetentionSeconds: number;
}

/** SPEC §9.5: the `error` status of a cancelled execution. */
const CANCELLED_STATUS = 499;

export function createBookkeeping(deps: BookkeepingDeps) {
  return {
    async publishError(input: PublishErrorInput): Promise<void> {
      // Before the event: the model request is aborted at once (DX-3), not after the relay's append.
      if (input.status === CANCELLED_STATUS)
        await deps.stopNotices.send(input.executionId).catch(() => undefined);
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
