// EX-5/TR-1/TR-2: the trace is stored (encrypted, with its TTL) after rendering and before the
// model call: the inputs, each placeholder's fragments with metadata and score, and the messages
// exactly as sent. Never the answer.
import { ApplicationFailure } from '@temporalio/common';
import type { ExecutionStore } from '../db/execution-store';
import type { FragmentStore } from '../db/fragment-store';
import type { TraceStore } from '../infra/trace-store';
import { FailureType, type StoreTraceInput } from '../workflows/contracts';
import type { ModelRequestContent } from '../services/answers';
import type { ExecutionScratch } from './execution-scratch';
import type { AgentRequestContent } from '../services/retrieval';

export interface TraceDeps {
  executions: ExecutionStore;
  fragments: FragmentStore;
  traces: TraceStore;
  traceTtlSeconds: number;
  /** The request, fragments and messages of the steps before, when they ran in this process. */
  scratch: ExecutionScratch;
}

export function createStoreTrace(deps: TraceDeps) {
  return async function storeTrace(input: StoreTraceInput): Promise<void> {
    const messages = deps.scratch.rendered(input.executionId, input.renderedPayloadId);
    const [request, rendered] = await Promise.all([
      deps.scratch.request(input.executionId, () =>
        deps.executions.getPayload<AgentRequestContent>(input.requestPayloadId),
      ),
      messages ? { messages } : deps.executions.getPayload<ModelRequestContent>(input.renderedPayloadId),
    ]);
    if (!request || !rendered) {
      // The API announces the trace id on success: never pretend a trace was stored.
      throw ApplicationFailure.create({
        type: FailureType.NotFound,
        message: 'The execution content no longer exists',
        nonRetryable: true,
      });
    }
    const traces: Record<string, unknown[]> = {};
    for (const [name, refs] of Object.entries(input.retrievals)) {
      const ids = refs.map((r) => r.id);
      const fragments =
        deps.scratch.retrieved(input.executionId, name, ids) ?? (await deps.fragments.byIds(ids));
      const scores = new Map(refs.map((r, i) => [r.id, { score: r.score, order_id: i }]));
      traces[name] = fragments.map(
        ({ id, classification, metadata, document_id, page_content, version, expired_at }) => ({
          id,
          classification,
          metadata,
          document_id,
          page_content,
          version,
          expired_at,
          ...scores.get(id),
        }),
      );
    }
    const trace = {
      traces,
      prompt: rendered.messages.map((m) => ({ role: m.role, template: m.content })),
      inputs: request.values,
    };
    await deps.traces.put(input.traceId, input.apiKeyId, trace, deps.traceTtlSeconds);
  };
}
