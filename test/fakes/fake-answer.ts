// One answer of the fake Responses API, as OpenAI writes it: the response object (in progress,
// completed, incomplete, failed) and the events of a streamed answer in their order: an optional
// reasoning item with its summary deltas, then one or more message items of one or more
// output_text parts (or a refusal part), annotation events, and the end (`response.completed` or
// `.incomplete`). A scripted stop ends the stream after some deltas: a dropped or stalled
// connection, `response.failed`, an `error` event, a clean end without `response.completed`, or a
// socket cut in the middle of an event.
import type { ServerResponse } from 'node:http';
import { cutConnection, newId, sleep, type EventWriter } from './fake-wire';

/** How a stream that stops early stops. */
export type StreamFault = 'failed' | 'error' | 'end' | 'cut-mid-event';

export interface AnswerShape {
  /** The deltas of each output_text part of each message item: `items[i][j]` are part j of item i's. */
  items: string[][][];
  /** A reasoning item before the messages: its summary's deltas, and the tokens it cost. */
  reasoning?: { summary: string[]; tokens: number };
  /** The message holds a refusal part with this text instead of output_text. */
  refusal?: string;
  /** A url_citation annotation after each part's first delta. */
  annotations?: boolean;
}

export interface AnswerStream {
  writer: EventWriter;
  res: ServerResponse;
  shape: AnswerShape;
  object: ResponseObjects;
  delayMs: number;
  /** Stop after this many text deltas (empty ones count), as `how` says. */
  stop?: { afterDeltas: number; how: 'drop' | 'stall' | StreamFault };
  /** Marks the request as cut by the server (not aborted by its client). */
  markDropped(): void;
  /** Ends with `response.incomplete` for this reason instead of `response.completed`. */
  incomplete?: string;
  hang?: boolean;
  beforeEnd?: () => Promise<void>;
}

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

/** The response object at each status; `output` holds the finished items. */
export type ResponseObjects = (status: ResponseStatus, output?: unknown[]) => Record<string, unknown>;

export const answerText = (shape: AnswerShape): string => shape.items.flat(2).join('');

type Position = { item_id: string; output_index: number; content_index: number };

/** Text deltas sent so far, and where the last one went. */
interface Counter {
  deltas: number;
  at?: Position;
}

interface Item {
  id: string;
  index: number;
}

const reasoningItem = (item: Item, summary: string, status: string) => ({
  id: item.id,
  type: 'reasoning',
  status,
  summary: summary === '' && status === 'in_progress' ? [] : [{ type: 'summary_text', text: summary }],
});

const messageItem = (item: Item, content: unknown[], status: string) => ({
  id: item.id,
  type: 'message',
  status,
  role: 'assistant',
  content,
});

const textPart = (text: string) => ({ type: 'output_text', text, annotations: [], logprobs: [] });

/** Streams the answer; resolves once it ended, stopped or stalled. */
export async function streamAnswer(s: AnswerStream): Promise<void> {
  const { writer } = s;
  writer.send('response.created', { response: s.object('in_progress') });
  if (s.hang) return;
  writer.send('response.in_progress', { response: s.object('in_progress') });
  const done: unknown[] = [];
  let index = 0;
  if (s.shape.reasoning)
    done.push(streamReasoning(writer, { id: newId('rs'), index: index++ }, s.shape.reasoning));
  const counter: Counter = { deltas: 0 };
  for (const parts of s.shape.items) {
    const item = { id: newId('msg'), index: index++ };
    const finished = await streamMessage(s, item, parts, counter);
    if (finished === undefined) return;
    done.push(finished);
  }
  // A stop after more deltas than the answer has comes before its end.
  if (s.stop)
    return stopStream(s, counter.at ?? { item_id: newId('msg'), output_index: index, content_index: 0 });
  if (s.beforeEnd) await s.beforeEnd();
  if (s.incomplete) writer.send('response.incomplete', { response: s.object('incomplete', done) });
  else writer.send('response.completed', { response: s.object('completed', done) });
  s.res.end();
}

function streamReasoning(writer: EventWriter, item: Item, reasoning: { summary: string[] }): unknown {
  const at = { item_id: item.id, output_index: item.index };
  const summary = reasoning.summary.join('');
  writer.send('response.output_item.added', {
    output_index: item.index,
    item: reasoningItem(item, '', 'in_progress'),
  });
  writer.send('response.reasoning_summary_part.added', {
    ...at,
    summary_index: 0,
    part: { type: 'summary_text', text: '' },
  });
  for (const delta of reasoning.summary)
    writer.send('response.reasoning_summary_text.delta', { ...at, summary_index: 0, delta });
  writer.send('response.reasoning_summary_text.done', { ...at, summary_index: 0, text: summary });
  writer.send('response.reasoning_summary_part.done', {
    ...at,
    summary_index: 0,
    part: { type: 'summary_text', text: summary },
  });
  const finished = reasoningItem(item, summary, 'completed');
  writer.send('response.output_item.done', { output_index: item.index, item: finished });
  return finished;
}

/** One message item; undefined when the scripted stop ended the stream in it. */
async function streamMessage(
  s: AnswerStream,
  item: Item,
  parts: string[][],
  counter: Counter,
): Promise<unknown> {
  const { writer } = s;
  writer.send('response.output_item.added', {
    output_index: item.index,
    item: messageItem(item, [], 'in_progress'),
  });
  if (s.shape.refusal !== undefined) {
    const content = [streamRefusal(writer, item, s.shape.refusal)];
    const finished = messageItem(item, content, 'completed');
    writer.send('response.output_item.done', { output_index: item.index, item: finished });
    return finished;
  }
  const content: unknown[] = [];
  for (const [contentIndex, deltas] of parts.entries()) {
    const at = { item_id: item.id, output_index: item.index, content_index: contentIndex };
    writer.send('response.content_part.added', { ...at, part: textPart('') });
    for (const [n, delta] of deltas.entries()) {
      if (s.stop && counter.deltas >= s.stop.afterDeltas) return stopStream(s, at);
      if (counter.deltas > 0 && s.delayMs > 0) await sleep(s.delayMs);
      if (!writer.send('response.output_text.delta', { ...at, delta, logprobs: [] })) return undefined;
      counter.deltas += 1;
      counter.at = at;
      if (n === 0 && s.shape.annotations)
        writer.send('response.output_text.annotation.added', annotation(at));
    }
    const text = deltas.join('');
    writer.send('response.output_text.done', { ...at, text, logprobs: [] });
    writer.send('response.content_part.done', { ...at, part: textPart(text) });
    content.push(textPart(text));
  }
  const finished = messageItem(item, content, s.incomplete ? 'incomplete' : 'completed');
  writer.send('response.output_item.done', { output_index: item.index, item: finished });
  return finished;
}

function streamRefusal(writer: EventWriter, item: Item, refusal: string): unknown {
  const at = { item_id: item.id, output_index: item.index, content_index: 0 };
  writer.send('response.content_part.added', { ...at, part: { type: 'refusal', refusal: '' } });
  for (const delta of refusal.match(/\s*\S+/g) ?? []) writer.send('response.refusal.delta', { ...at, delta });
  writer.send('response.refusal.done', { ...at, refusal });
  const part = { type: 'refusal', refusal };
  writer.send('response.content_part.done', { ...at, part });
  return part;
}

const annotation = (at: Position) => ({
  ...at,
  annotation_index: 0,
  annotation: {
    type: 'url_citation',
    start_index: 0,
    end_index: 1,
    title: 'Source',
    url: 'https://example.com/',
  },
});

async function stopStream(s: AnswerStream, at: Position): Promise<undefined> {
  const how = s.stop!.how;
  if (how === 'stall') return undefined; // silent; the socket stays open
  if (how === 'failed') {
    const error = { code: 'server_error', message: 'The model failed to generate a response.' };
    s.writer.send('response.failed', { response: { ...s.object('failed'), error } });
    s.res.end();
  } else if (how === 'error') {
    s.writer.send('error', {
      code: 'server_error',
      message: 'An error occurred while streaming.',
      param: null,
    });
    s.res.end();
  } else if (how === 'end') {
    s.res.end();
  } else {
    s.markDropped();
    if (how === 'cut-mid-event') s.writer.cutMidEvent('response.output_text.delta', { ...at, delta: 'lost' });
    else {
      // Let the client read the deltas before the connection goes, as on a real network drop.
      await sleep(Math.max(s.delayMs, 100));
      cutConnection(s.res);
    }
  }
  return undefined;
}
