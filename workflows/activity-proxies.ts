// The activity proxies the execution workflows share, one per option profile (STYLE: samples-
// typescript): the model call as an activity, and the short database and relay steps as local
// activities, recorded in the workflow task that runs them without a schedule/dispatch/complete
// round trip through the server each (DESIGN §6).
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { ExecutionProfiles } from './contracts';
import { retryPolicy } from './retry-policy';

/** The model call: heartbeats while it streams, retried on the LLM profile (LLM-3). */
export function modelActivities(profiles: ExecutionProfiles) {
  return proxyActivities<Pick<Activities, 'callModel'>>({
    startToCloseTimeout: profiles.llm.startToCloseMs,
    heartbeatTimeout: profiles.llm.heartbeatTimeoutMs,
    retry: retryPolicy(profiles.llm),
  });
}

/** The in-band `error` event and the execution record's outcome. */
export function bookkeepingActivities(profiles: ExecutionProfiles) {
  return proxyLocalActivities<Pick<Activities, 'publishError' | 'finishExecution'>>({
    startToCloseTimeout: profiles.bookkeeping.startToCloseMs,
    retry: retryPolicy(profiles.bookkeeping),
  });
}

type ExecutionSteps = Pick<
  Activities,
  | 'retrieveFragments'
  | 'renderPrompt'
  | 'storeTrace'
  | 'planAgentReferences'
  | 'preparePromptExecution'
  | 'renderPromptExecution'
  | 'finishPromptExecution'
>;

/**
 * Retrieval, planning, rendering, the trace and recording. Local activities keep their own
 * timeout and retry policy (an embedding server that answers 429 is retried with backoff; past a
 * minute the SDK waits on a durable timer between attempts) and appear in history as markers.
 */
export function executionSteps(profiles: ExecutionProfiles) {
  return proxyLocalActivities<ExecutionSteps>({
    startToCloseTimeout: profiles.bookkeeping.startToCloseMs * 3,
    retry: retryPolicy(profiles.bookkeeping),
  });
}
