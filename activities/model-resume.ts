// Resumable mode (issue 27): what an attempt of a resumable LLM keeps where the next one finds it,
// and where the next one resumes. The response id and the provider's sequence number of the last
// event relayed go into the attempt's heartbeat details (ids and numbers only, never content). The
// relay log holds the text clients have, each delta with the sequence number it reaches
// (`through`): a retry resumes after the last relayed event of the response the log's text comes
// from (which may be newer than the last heartbeat that reached Temporal), and continues that text.
import type OpenAI from 'openai';
import { EventSequencer, type RelayEvent } from '../domain/stream-events';

/** Heartbeat details of a resumable attempt. */
export interface ModelProgress {
  responseId: string;
  /** The provider's sequence number of the last event whose text is relayed (absent: none yet). */
  relayed?: number;
}

/** A background response to resume: after event `after` (absent: from its start), continuing `text`. */
export interface Resumption {
  responseId: string;
  after?: number;
  text: string;
}

/** How a model stream of a resumable LLM went on after a break (the worker's metric's label). */
export type ResumeOutcome = 'resumed' | 'reconnected' | 'restarted';

/** The heartbeat details an earlier attempt left, when they are a resumable attempt's. */
export function progressOf(details: unknown): ModelProgress | undefined {
  const d = details as Partial<ModelProgress> | null | undefined;
  return d && typeof d.responseId === 'string' ? { responseId: d.responseId } : undefined;
}

/**
 * Where a retry resumes: the response the relayed text comes from, after its last relayed event;
 * without one in the log (Redis lost it), the earlier attempt's response from its start.
 */
export function resumptionFrom(log: RelayEvent[], prior: ModelProgress | undefined): Resumption | undefined {
  const sequencer = new EventSequencer();
  for (const event of log) sequencer.accept(event);
  if (sequencer.response !== undefined) {
    return sequencer.through === undefined
      ? { responseId: sequencer.response, text: '' }
      : { responseId: sequencer.response, after: sequencer.through, text: sequencer.text };
  }
  return prior ? { responseId: prior.responseId, text: '' } : undefined;
}

/** How long the provider's cancel may take (DX-3: a cancelled stream stops within 2 s). */
const CANCEL_TIMEOUT_MS = 1500;

/** Cancels a background response at the provider; false when it did not answer in time or refused. */
export async function cancelAtProvider(client: OpenAI, responseId: string): Promise<boolean> {
  try {
    await client.responses.cancel(responseId, { timeout: CANCEL_TIMEOUT_MS, maxRetries: 0 });
    return true;
  } catch {
    return false;
  }
}
