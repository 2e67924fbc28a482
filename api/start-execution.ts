// Starting an execution: the record and its encrypted request content are written first, then
// the workflow `execution-<id>` starts with ids only, the DX-5 search attributes and a summary
// of ids and names for the Temporal UI (workflows/user-metadata.ts). A start with given ids is
// idempotent (DX-4: a repeat taking over the Idempotency-Key claim of a start that died or
// stalled, api/idempotency.ts): a record already written is kept, a workflow already started is
// the one. The ids are chosen before the start, so `execution-<id>` found started was started by
// another start of these ids: this one attaches to it, and never marks it failed.
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { ExecutionStore, NewExecution } from '../db/execution-store';
import { Unavailable } from '../domain/errors';
import { newId } from '../infra/ids';
import { workflowIdFor, type ExecutionProfiles } from '../workflows/contracts';
import { SearchAttributes, searchAttributePairs } from '../workflows/search-attributes';
import { workflowMetadata, type WorkflowLabel } from '../workflows/user-metadata';
import type { ApiMetrics } from './metrics';
import type { Logger } from '../infra/logger';

export { SearchAttributes };

export interface StartExecutionDeps {
  logger: Logger;
  executions: ExecutionStore;
  temporal: Client;
  metrics: ApiMetrics;
  taskQueue: string;
  profiles: ExecutionProfiles;
  /** The client shares its connection with a worker of this process: start workflows eagerly. */
  eagerStart?: boolean;
}

interface ExecutionStart<Args> {
  record: Omit<NewExecution, 'id' | 'workflow_id'>;
  content: unknown;
  workflowType: string;
  args: (ids: { executionId: string; requestPayloadId: string; profiles: ExecutionProfiles }) => Args;
  searchAttributes: Partial<Record<keyof typeof SearchAttributes, string | null | undefined>>;
  /** The names of the record's agent, pipeline, LLM and chain, for the workflow's summary. */
  names?: Partial<Record<'agent' | 'pipeline' | 'llm' | 'chain', string>>;
  /**
   * Writes the record and its request content instead of `executions.create`, e.g. inside an
   * admission transaction (CH-4); it must have committed when it resolves.
   */
  writeRecord?: (execution: NewExecution, request: { payloadId: string; content: unknown }) => Promise<void>;
}

/** The ids an execution is started with: chosen before the start, so that a repeat can reuse them. */
export interface ExecutionIds {
  executionId: string;
  requestPayloadId: string;
  /** Another request may have started with these ids before (a taken-over claim). */
  again?: boolean;
  /**
   * Gives up the claim on these ids after a failed start: false when another request took it
   * over (and may have started them), so this start leaves the record alone.
   */
  relinquish?: () => Promise<boolean>;
}

export const newExecutionIds = (): ExecutionIds => ({ executionId: newId(), requestPayloadId: newId() });

export async function startExecution<Args>(
  deps: StartExecutionDeps,
  start: ExecutionStart<Args>,
  { executionId, requestPayloadId, again = false, relinquish }: ExecutionIds = newExecutionIds(),
): Promise<string> {
  const workflowId = workflowIdFor(executionId);
  const write = start.writeRecord ?? ((execution, request) => deps.executions.create(execution, request));
  // Started again: the record written before stays (and a chain's admission is not taken twice).
  if (!again || (await deps.executions.get(executionId)) === null) {
    await write(
      { ...start.record, id: executionId, workflow_id: workflowId },
      {
        payloadId: requestPayloadId,
        content: start.content,
      },
    );
  }
  const typedSearchAttributes = searchAttributePairs(start.searchAttributes);
  try {
    await deps.temporal.workflow.start(start.workflowType, {
      taskQueue: deps.taskQueue,
      workflowId,
      // Never a second run of an execution, even one that has closed.
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      args: [start.args({ executionId, requestPayloadId, profiles: deps.profiles })],
      typedSearchAttributes,
      ...workflowMetadata(labelOf(start.record, start.names ?? {})),
      ...(deps.eagerStart ? { requestEagerStart: true } : {}),
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return executionId;
    deps.logger.error({ err: (err as Error).message, executionId }, 'could not start the execution workflow');
    // Released first: once the key is gone nobody can take these ids over and start them.
    if (relinquish === undefined || (await relinquish()))
      await deps.executions
        .finish(executionId, { status: 'failed', error: { status: 503, type: 'Infra.Unavailable' } }, 0)
        .catch(() => undefined);
    throw new Unavailable('Could not start the execution: Temporal is unavailable');
  }
  deps.metrics.executionsStarted.inc({ kind: start.record.kind });
  return executionId;
}

/** The summary label of a record: its kind and the resources it names. */
function labelOf(
  record: ExecutionStart<unknown>['record'],
  names: NonNullable<ExecutionStart<unknown>['names']>,
): WorkflowLabel {
  const named = (id: string | null | undefined, name: string | undefined) =>
    id ? { id, ...(name ? { name } : {}) } : undefined;
  const agent = named(record.agent_id, names.agent);
  const pipeline = named(record.pipeline_id, names.pipeline);
  const llm = named(record.llm_id, names.llm);
  const chain = named(record.chain_id, names.chain);
  return {
    kind: record.kind,
    ...(agent
      ? { agent: { ...agent, ...(record.agent_version != null ? { version: record.agent_version } : {}) } }
      : {}),
    ...(pipeline ? { pipeline } : {}),
    ...(llm ? { llm } : {}),
    ...(chain ? { chain } : {}),
  };
}
