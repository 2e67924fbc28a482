// The content retention step (SPEC §9.3): deletes execution content whose retention has passed;
// the records stay for audit. Run by the `contentRetention` workflow that the deployment's
// Temporal Schedule starts (infra/retention-schedule.ts).
import type { ExecutionStore } from '../db/execution-store';

export interface ContentRetentionDeps {
  executions: ExecutionStore;
}

export function createContentRetention(deps: ContentRetentionDeps) {
  return {
    /** The number of content rows deleted (ids only in history: a count). */
    async deleteExpiredContent(): Promise<{ deleted: number }> {
      return { deleted: await deps.executions.deleteExpiredPayloads() };
    },
  };
}
