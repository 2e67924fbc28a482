// SPEC §18: what an execution sends to the model is at most the configured rendered-prompt limit
// (2 MB by default); beyond, the execution fails as a 400 before any trace or model call, and is
// never retried.
import { ApplicationFailure } from '@temporalio/common';
import type { ChatMessage } from '../domain/llm-request';
import type { Limits } from '../domain/limits';
import { FailureType } from '../workflows/contracts';

/** The messages sent to the model, at most `limits.renderedPromptBytes` of UTF-8. */
export function checkRenderedSize(
  messages: readonly ChatMessage[],
  limits: Pick<Limits, 'renderedPromptBytes'>,
): void {
  const bytes = messages.reduce((sum, m) => sum + Buffer.byteLength(m.content, 'utf8'), 0);
  if (bytes > limits.renderedPromptBytes) {
    throw ApplicationFailure.create({
      type: FailureType.RenderTooLarge,
      message: `Rendered prompt is ${bytes} bytes; the limit is ${limits.renderedPromptBytes} bytes`,
      nonRetryable: true,
    });
  }
}
