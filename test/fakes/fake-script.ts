// What a scripted behaviour of the fake Responses API says a request gets: the per-model script
// (FakeBehaviour: the answer's shape, its pace, its wire, its faults), the per-request `sequence`
// steps, the usage reported, and the response object at each status.
import type { AnswerShape, AnswerStream, ResponseObjects, StreamFault } from './fake-answer';
import type { FakeBackgroundBehaviour } from './fake-background';
import { countWords, isRecord, newId, type FakeFailure, type FakeWire } from './fake-wire';

/**
 * One request's outcome in a `sequence`: answer HTTP `fail` (with a `retry-after` in seconds or
 * as an HTTP date); stream `dropAfterDeltas` deltas then cut the connection; stream
 * `stallAfterDeltas` deltas then go silent with the connection open (until the client gives up);
 * stream `afterDeltas` deltas then stop with `fault` (`failed`: a `response.failed` event;
 * `error`: an `error` event; `end`: the response ends cleanly without `response.completed`;
 * `cut-mid-event`: half of the next event's bytes, then the socket is destroyed); never send the
 * headers (`hangBeforeHeaders`); or `'ok'` (answer normally). A stop after more deltas than the
 * answer has comes after its last delta, before its end.
 */
export type FakeStep =
  | ({ fail: number; message?: string } & FakeFailure)
  | { dropAfterDeltas: number }
  | { stallAfterDeltas: number }
  | { fault: StreamFault; afterDeltas: number }
  | { hangBeforeHeaders: true }
  | 'ok';

export interface FakeBehaviour {
  /**
   * The n-th request for this model since it was scripted follows `sequence[n]`; requests past its
   * end answer as the rest of the behaviour says. Checked before `failFirst` and `dropAfterDeltas`.
   */
  sequence?: FakeStep[];
  /** Answer text; default: `Echo: <last user message content>`. */
  text?: string;
  /** The deltas exactly as sent, empty ones included (instead of `text` cut by `chunkSize`): the text is their concatenation. */
  deltas?: string[];
  /**
   * The answer as several message items of several output_text parts: `items[i][j]` is the text
   * of item i's part j, each cut by `chunkSize`. The text is their concatenation (as the SDKs'
   * `output_text`). Instead of `text` and `deltas`.
   */
  items?: string[][];
  /**
   * A reasoning item before the message, its summary streamed as these
   * `response.reasoning_summary_text.delta`s; `tokens` are counted in `output_tokens` and in
   * `output_tokens_details.reasoning_tokens`, as OpenAI reports them.
   */
  reasoning?: { summary: string[]; tokens: number };
  /** The message is a refusal with this text (`response.refusal.delta`s, `.done`), no output_text; the response still completes. */
  refusal?: string;
  /** A `response.output_text.annotation.added` (a url_citation) after each part's first delta. */
  annotations?: boolean;
  /** How the events are framed (CRLF, `data:` only, keep-alive comments); default OpenAI's. */
  wire?: FakeWire;
  /** Delay between deltas in milliseconds (default 0). */
  deltaDelayMs?: number;
  /** Characters per delta (default: words with their leading spaces, e.g. 'Hello', ' world'). */
  chunkSize?: number;
  /** The first `count` requests for this model answer HTTP `status` with an OpenAI error body. */
  failFirst?: { count: number; status: number; message?: string } & FakeFailure;
  /**
   * The first `attempts` requests for this model stream `after` deltas then destroy the socket (no
   * response.completed). A non-streaming request counted here has its socket destroyed before any answer.
   */
  dropAfterDeltas?: { attempts: number; after: number };
  /** Send headers + response.created (streaming) or just headers (non-streaming), then nothing more. */
  hang?: boolean;
  /** Never answer at all. */
  hangBeforeHeaders?: boolean;
  /** Default: computed as words of input (instructions + messages) / words of output (+ reasoning tokens). */
  usage?: { input_tokens: number; output_tokens: number };
  /** Streams the text, then ends with `response.incomplete` for this reason (not `completed`). */
  incomplete?: 'max_output_tokens' | 'content_filter';
  /**
   * Awaited after the last delta, before the stream's end events (in-process servers only): a
   * test holds a complete answer's end to act in that window.
   */
  beforeEnd?: () => Promise<void>;
  /** Faults of background responses (`background: true, stream: true`; test/fakes/fake-background.ts). */
  background?: FakeBackgroundBehaviour;
}

export interface Usage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/** Text of a message content: a string, or parts such as `{type:'input_text', text}`. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part: unknown) => (isRecord(part) && typeof part.text === 'string' ? part.text : ''))
    .filter((text) => text.length > 0)
    .join('\n');
}

function inputMessages(input: unknown): { role: string; text: string }[] {
  if (typeof input === 'string') return [{ role: 'user', text: input }];
  if (!Array.isArray(input)) return [];
  const messages: { role: string; text: string }[] = [];
  for (const item of input) {
    if (isRecord(item) && typeof item.role === 'string') {
      messages.push({ role: item.role, text: contentText(item.content) });
    }
  }
  return messages;
}

function lastUserMessage(input: unknown): string {
  const users = inputMessages(input).filter((message) => message.role === 'user');
  return users[users.length - 1]?.text ?? '';
}

function countInputWords(body: Record<string, unknown>): number {
  const instructions = typeof body.instructions === 'string' ? body.instructions : '';
  return inputMessages(body.input).reduce(
    (sum, message) => sum + countWords(message.text),
    countWords(instructions),
  );
}

/** Split text into deltas whose concatenation is exactly the text. */
export function chunkText(text: string, chunkSize?: number): string[] {
  if (text.length === 0) return [];
  if (chunkSize !== undefined && chunkSize > 0) {
    const chunks: string[] = [];
    for (let i = 0; i < text.length; i += chunkSize) chunks.push(text.slice(i, i + chunkSize));
    return chunks;
  }
  return text.match(/\s*\S+|\s+$/g) ?? [text];
}

/** The answer's items, parts and deltas as the behaviour scripts them. */
export function shapeOf(behaviour: FakeBehaviour, body: Record<string, unknown>): AnswerShape {
  const cut = (text: string) => chunkText(text, behaviour.chunkSize);
  const items = behaviour.items
    ? behaviour.items.map((parts) => parts.map(cut))
    : [[behaviour.deltas ?? cut(behaviour.text ?? `Echo: ${lastUserMessage(body.input)}`)]];
  return {
    items,
    ...(behaviour.reasoning ? { reasoning: behaviour.reasoning } : {}),
    ...(behaviour.refusal !== undefined ? { refusal: behaviour.refusal } : {}),
    ...(behaviour.annotations ? { annotations: true } : {}),
  };
}

export function usageOf(behaviour: FakeBehaviour, body: Record<string, unknown>, text: string): Usage {
  const reasoning = behaviour.reasoning?.tokens ?? 0;
  const usage: Usage = {
    input_tokens: behaviour.usage?.input_tokens ?? countInputWords(body),
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: behaviour.usage?.output_tokens ?? countWords(text) + reasoning,
    output_tokens_details: { reasoning_tokens: reasoning },
    total_tokens: 0,
  };
  usage.total_tokens = usage.input_tokens + usage.output_tokens;
  return usage;
}

/** Where a step stops the stream, if it does. */
export function stopOf(step: FakeStep): AnswerStream['stop'] {
  if (step === 'ok') return undefined;
  if ('dropAfterDeltas' in step) return { afterDeltas: step.dropAfterDeltas, how: 'drop' };
  if ('stallAfterDeltas' in step) return { afterDeltas: step.stallAfterDeltas, how: 'stall' };
  if ('fault' in step) return { afterDeltas: step.afterDeltas, how: step.fault };
  return undefined;
}

/** The response object of one request at each status, as OpenAI answers it. */
export function responseObjects(
  body: Record<string, unknown>,
  model: string,
  behaviour: FakeBehaviour,
  usage: Usage,
): ResponseObjects {
  const id = newId('resp');
  const createdAt = Math.floor(Date.now() / 1000);
  return (status, output = []) => ({
    id,
    object: 'response',
    created_at: createdAt,
    status,
    background: false,
    error: null,
    incomplete_details: status === 'incomplete' ? { reason: behaviour.incomplete } : null,
    instructions: typeof body.instructions === 'string' ? body.instructions : null,
    max_output_tokens: typeof body.max_output_tokens === 'number' ? body.max_output_tokens : null,
    metadata: isRecord(body.metadata) ? body.metadata : {},
    model,
    output,
    parallel_tool_calls: true,
    previous_response_id: typeof body.previous_response_id === 'string' ? body.previous_response_id : null,
    reasoning: { effort: null, summary: null },
    store: typeof body.store === 'boolean' ? body.store : true,
    temperature: typeof body.temperature === 'number' ? body.temperature : 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: typeof body.top_p === 'number' ? body.top_p : 1,
    truncation: 'disabled',
    usage: status === 'in_progress' ? null : usage,
    user: null,
  });
}
