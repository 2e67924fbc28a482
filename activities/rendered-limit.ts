// SPEC §18: what an execution sends to the model is at most 2 MB; beyond, the execution fails as
// a 400 before any trace or model call, and is never retried.
import { ApplicationFailure } from '@temporalio/common';
import type { ChatMessage } from '../domain/llm-request';
import { FailureType } from '../workflows/contracts';

/** SPEC §18: the messages sent to the model, at most 2 MB of UTF-8 (400 otherwise, never retried). */
export const RENDERED_LIMIT_BYTES = 2 * 1024 * 1024;

export function checkRenderedSize(messages: readonly ChatMessage[]): void {
  const bytes = messages.reduce((sum, m) => sum + Buffer.byteLength(m.content, 'utf8'), 0);
  if (bytes > RENDERED_LIMIT_BYTES) {
    throw ApplicationFailure.create({
      type: FailureType.RenderTooLarge,
      message: `Rendered prompt is ${bytes} bytes; the limit is ${RENDERED_LIMIT_BYTES} bytes`,
      nonRetryable: true,
    });
  }
}
