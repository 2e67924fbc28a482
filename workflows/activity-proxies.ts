// The activity proxies the execution workflows share, one per option profile (STYLE: samples-
// typescript): the model call as an activity, and the short database and relay steps as local
// activities, recorded in the workflow task that runs them without a schedule/dispatch/complete
// round trip through the server each (DESIGN §6). Every activity carries a summary (Temporal user
// metadata: ids only), so the UI's timeline reads "retrieve context", "call model" and so on.
import { proxyActivities, proxyLocalActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { tasksQueueOf, type ExecutionProfiles } from './contracts';
import { retryPolicy } from './retry-policy';

/**
 * One proxy per activity, each with its summary. The proxies are Proxy objects whose functions
 * are created on access: pick each function out of a proxy made with its own summary.
 */
export function withSummaries<P extends object>(
  summaries: { [K in keyof P]: string },
  proxy: (summary: string) => P,
): P {
  const out = {} as P;
  for (const name of Object.keys(summaries) as (keyof P)[]) out[name] = proxy(summaries[name])[name];
  return out;
}

/** The queue of this workflow's activities other than the model call (contracts: `tasksQueueOf`). */
export const tasksQueue = (): string => tasksQueueOf(workflowInfo().taskQueue);

/**
 * The model call: heartbeats while it streams, retried on the LLM profile (LLM-3). The summary
 * names the LLM, not the attempt: the server retries a scheduled activity without a new command,
 * so the attempt is not known when the summary is written (the UI shows it on each attempt).
 */
export function modelActivities(profiles: ExecutionProfiles) {
  const { callModel } = proxyActivities<Pick<Activities, 'callModel'>>({
    startToCloseTimeout: profiles.llm.startToCloseMs,
    heartbeatTimeout: profiles.llm.heartbeatTimeoutMs,
    retry: retryPolicy(profiles.llm),
  });
  return {
    /** `route` is the LLM's place in a routing list of more than one (PC-10). */
    callModel(input: Parameters<Activities['callModel']>[0], route?: { index: number; of: number }) {
      const routed = route && route.of > 1 ? `, route ${route.index + 1} of ${route.of}` : '';
      return callModel.executeWithOptions({ summary: `call model (LLM ${input.llmId}${routed})` }, [input]);
    },
  };
}

/** The in-band `error` event and the execution record's outcome. */
export function bookkeepingActivities(profiles: ExecutionProfiles) {
  return withSummaries(
    { publishError: 'publish error event', finishExecution: 'record outcome' },
    (summary) =>
      proxyLocalActivities<Pick<Activities, 'publishError' | 'finishExecution'>>({
        startToCloseTimeout: profiles.bookkeeping.startToCloseMs,
        retry: retryPolicy(profiles.bookkeeping),
        summary,
      }),
  );
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

const STEP_SUMMARIES: Record<keyof ExecutionSteps, string> = {
  retrieveFragments: 'retrieve context',
  renderPrompt: 'render prompt',
  storeTrace: 'store trace',
  planAgentReferences: 'plan references',
  preparePromptExecution: 'plan prompt execution',
  renderPromptExecution: 'render prompt',
  finishPromptExecution: 'record answer',
};

/**
 * Retrieval, planning, rendering, the trace and recording. Local activities keep their own
 * timeout and retry policy (an embedding server that answers 429 is retried with backoff; past a
 * minute the SDK waits on a durable timer between attempts) and appear in history as markers.
 */
export function executionSteps(profiles: ExecutionProfiles) {
  return withSummaries(STEP_SUMMARIES, (summary) =>
    proxyLocalActivities<ExecutionSteps>({
      startToCloseTimeout: profiles.bookkeeping.startToCloseMs * 3,
      retry: retryPolicy(profiles.bookkeeping),
      summary,
    }),
  );
}
