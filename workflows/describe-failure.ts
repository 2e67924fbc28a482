// One reading of a failed execution for everyone: the workflow (to publish the in-band `error`
// event and the record) and the API (for the status of a response not yet started).
import { ApplicationFailure, CancelledFailure, TemporalFailure } from '@temporalio/common';
import { FailureType, statusForFailure, type UpstreamFailureDetails } from './contracts';

interface FailureDescription {
  status: number;
  type: string;
  detail: string;
  cancelled: boolean;
}

function causes(err: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e: unknown = err; e && chain.length < 10; e = (e as { cause?: unknown }).cause) chain.push(e);
  return chain;
}

export function describeFailure(err: unknown): FailureDescription {
  const chain = causes(err);
  if (chain.some((e) => e instanceof CancelledFailure)) {
    return { status: 499, type: 'Execution.Cancelled', detail: 'Execution cancelled', cancelled: true };
  }
  const app = chain.filter((e): e is ApplicationFailure => e instanceof ApplicationFailure).pop();
  const type = app?.type ?? 'Infra.Unknown';
  const status = statusForFailure(type, false);
  const upstream = app?.details?.[0] as UpstreamFailureDetails | undefined;
  let detail: string;
  if (type === FailureType.LlmRefused) {
    // The server did not fail: the model declined (its words are content, never in the detail).
    detail = 'Model refused to answer';
  } else if (type.startsWith('Llm.')) {
    const what = upstream?.upstreamStatus
      ? `${upstream.upstreamStatus} ${upstream.message}`
      : (upstream?.message ?? app?.message);
    detail = `Model server failed: ${what}`;
  } else if (status === 503) {
    detail = 'Execution failed: a dependency is unavailable, try again';
  } else {
    const last = chain[chain.length - 1];
    detail = app?.message ?? (last instanceof TemporalFailure ? last.message : 'Execution failed');
  }
  return { status, type, detail, cancelled: false };
}
