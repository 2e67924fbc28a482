// An execution's client events as the Responses API streams them (api/responses-events.ts), read
// back by the openai SDK's own stream helper (ResponseStream, which accumulates the events into a
// response snapshot exactly as it does for OpenAI's API): numbering, the final response, failures,
// and what a client sees when a retried model attempt restarts the answer (issue 28 item 6).
import { ResponseStream } from 'openai/lib/responses/ResponseStream';
import type { ClientEvent } from '../../domain/stream-events';
import { ResponsesEventStream, type ResponsesEvent } from '../../api/responses-events';
import { createdAtOf, type ResponseView } from '../../api/responses-objects';

const ID = '0190a3c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d';
const VIEW: ResponseView = {
  id: ID,
  createdAt: createdAtOf(ID),
  model: 'llm-1',
  agentId: 'agent-1',
  agentVersion: 3,
  pipelineId: 'pipeline-1',
  traceId: null,
};
const USAGE = { input_tokens: 12, output_tokens: 4 };

type Unnumbered<E> = E extends unknown ? Omit<E, 'seq'> : never;

/** Numbers client events as the sequencer does (SPEC §9.5). */
function numbered(events: Unnumbered<ClientEvent>[]): ClientEvent[] {
  return events.map((e, i) => ({ ...e, seq: i + 1 }) as ClientEvent);
}

const delta = (text: string, attempt = 1) => ({ type: 'delta' as const, attempt, text });
const reset = (attempt: number) => ({ type: 'reset' as const, attempt });
const done = (attempt = 1) => ({ type: 'done' as const, attempt, usage: USAGE });

function mapAll(events: ClientEvent[]): ResponsesEvent[] {
  const stream = new ResponsesEventStream(VIEW);
  return [...stream.begin(), ...events.flatMap((e) => stream.accept(e))];
}

/** What the SDK's helper makes of the events: the final response and each delta's snapshot. */
async function readWithSdk(events: ResponsesEvent[]) {
  const body = events.map((e) => JSON.stringify(e)).join('\n');
  const readable = new ReadableStream({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(body));
      controller.close();
    },
  });
  const stream = ResponseStream.fromReadableStream(readable);
  const snapshots: string[] = [];
  stream.on('response.output_text.delta', (e) => snapshots.push(e.snapshot));
  const final = await stream.finalResponse();
  return { final, snapshots };
}

const deltas = (events: ResponsesEvent[]) =>
  events.filter(
    (e): e is Extract<ResponsesEvent, { type: 'response.output_text.delta' }> =>
      e.type === 'response.output_text.delta',
  );
const types = (events: ResponsesEvent[]) => events.map((e) => e.type);

describe('Responses events of an execution (issue 28)', () => {
  it('an answer: created, in_progress, one message item, its deltas, the done events, completed; sequence_number from 0 without gaps', async () => {
    const events = mapAll(numbered([delta('Data'), delta(' rotates.'), done()]));
    expect(types(events)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const completed = events.at(-1) as Extract<ResponsesEvent, { type: 'response.completed' }>;
    expect(completed.response).toMatchObject({
      id: ID,
      object: 'response',
      status: 'completed',
      model: 'llm-1',
      prompt: { id: 'agent-1', version: '3' },
      metadata: { pipeline: 'pipeline-1' },
      output_text: 'Data rotates.',
      usage: { input_tokens: 12, output_tokens: 4, total_tokens: 16 },
    });
    const { final, snapshots } = await readWithSdk(events);
    expect(final.output_text).toBe('Data rotates.');
    expect(final.status).toBe('completed');
    expect(snapshots).toEqual(['Data', 'Data rotates.']);
  });

  it('issue 33: an answer the model stopped short ends with response.incomplete and its reason; the text it gave is the output', async () => {
    const incomplete = { ...done(), incomplete_details: { reason: 'max_output_tokens' } };
    const events = mapAll(numbered([delta('Half an'), incomplete]));
    const last = events.at(-1) as Extract<ResponsesEvent, { type: 'response.incomplete' }>;
    expect(last.type).toBe('response.incomplete');
    expect(last.response).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      output: [{ status: 'incomplete' }],
      output_text: 'Half an',
    });
    const { final } = await readWithSdk(events);
    expect(final.status).toBe('incomplete');
    expect(final.output_text).toBe('Half an');
  });

  it('an empty answer still completes with one (empty) message', async () => {
    const events = mapAll(numbered([done()]));
    const { final } = await readWithSdk(events);
    expect(final.output).toHaveLength(1);
    expect(final.output_text).toBe('');
  });

  it('is a pure function of the events: two readers number and word them identically (a resumed stream equals the live one)', () => {
    const log = numbered([delta('a'), delta('b'), reset(2), delta('x', 2), done(2)]);
    expect(JSON.stringify(mapAll(log))).toBe(JSON.stringify(mapAll(log)));
  });

  it('item 6: a retried attempt that repeats the text the client has shows nothing of the restart: the deltas concatenate to the answer once', async () => {
    const log = numbered([
      delta('The vault'),
      delta(' rotates'),
      reset(2),
      delta('The'),
      delta(' vault rotates'),
      delta(' credentials.'),
      done(2),
    ]);
    const events = mapAll(log);
    expect(types(events).filter((t) => t === 'response.in_progress')).toHaveLength(1);
    expect(
      deltas(events)
        .map((e) => e.delta)
        .join(''),
    ).toBe('The vault rotates credentials.');
    expect(new Set(deltas(events).map((e) => e.item_id)).size).toBe(1);
    const { final, snapshots } = await readWithSdk(events);
    expect(final.output_text).toBe('The vault rotates credentials.');
    expect(snapshots.at(-1)).toBe('The vault rotates credentials.');
  });

  it('item 6: a retried attempt that says something else restarts the response: response.in_progress with no output, then a new item; the SDK helper ends with the new text only', async () => {
    const log = numbered([
      delta('Rotate'),
      delta(' weekly'),
      reset(2),
      delta('Rotate'),
      delta(' monthly.'),
      done(2),
    ]);
    const events = mapAll(log);
    const restart = events.findIndex((e, i) => i > 1 && e.type === 'response.in_progress');
    expect(restart).toBeGreaterThan(0);
    expect(events[restart]).toMatchObject({
      response: { status: 'in_progress', output: [], output_text: '' },
    });
    const [first, second] = [...new Set(deltas(events).map((e) => e.item_id))];
    expect(first).not.toBe(second);
    // Keyed by item, as the protocol lets a client hold them: the last item is the answer.
    const lastItem = deltas(events).filter((e) => e.item_id === second);
    expect(lastItem.map((e) => e.delta).join('')).toBe('Rotate monthly.');
    const { final, snapshots } = await readWithSdk(events);
    expect(final.output_text).toBe('Rotate monthly.');
    expect(final.output).toHaveLength(1);
    expect(snapshots.at(-1)).toBe('Rotate monthly.');
    // No snapshot ever mixes the attempts.
    expect(snapshots.every((s) => 'Rotate weekly'.startsWith(s) || 'Rotate monthly.'.startsWith(s))).toBe(
      true,
    );
  });

  it('item 6: a retried attempt that ends with less than the client holds restarts at its end', async () => {
    const events = mapAll(numbered([delta('Yes, and more'), reset(2), delta('Yes'), done(2)]));
    const { final } = await readWithSdk(events);
    expect(final.output_text).toBe('Yes');
    expect(types(events).filter((t) => t === 'response.in_progress')).toHaveLength(2);
  });

  it('a reset before any text (a retry before the model said anything) changes nothing', () => {
    const plain = mapAll(numbered([delta('ok'), done()]));
    const events = mapAll(numbered([reset(2), delta('ok', 2), done(2)]));
    expect(types(events)).toEqual(types(plain));
  });

  it('a failure ends with error (which the SDK helper raises) then response.failed carrying the status words; a cancellation reads as a cancelled response', async () => {
    const failed = mapAll(
      numbered([delta('Par'), { type: 'error', status: 502, detail: 'Model server failed: 500 boom' }]),
    );
    expect(failed.slice(-2)).toMatchObject([
      { type: 'error', code: 'upstream_error', message: 'Model server failed: 500 boom', param: null },
      {
        type: 'response.failed',
        response: {
          status: 'failed',
          error: { code: 'server_error', message: 'Model server failed: 500 boom' },
        },
      },
    ]);
    // The SDK's stream helper raises the `error` event: finalResponse() rejects with its code and words.
    await expect(readWithSdk(failed)).rejects.toMatchObject({
      code: 'upstream_error',
      message: 'Model server failed: 500 boom',
    });
    const cancelled = mapAll(numbered([{ type: 'error', status: 499, detail: 'Execution cancelled' }]));
    expect(cancelled.slice(-2)).toMatchObject([
      { type: 'error', code: 'cancelled' },
      { type: 'response.failed', response: { status: 'cancelled', error: null } },
    ]);
  });

  it('nothing follows the terminal event', () => {
    const stream = new ResponsesEventStream(VIEW);
    stream.begin();
    stream.accept({ type: 'done', seq: 1, attempt: 1, usage: USAGE });
    expect(stream.accept({ type: 'delta', seq: 2, attempt: 1, text: 'late' })).toEqual([]);
  });

  it('an archived answer resumed after event N starts over at N + 1 with the whole answer', async () => {
    const stream = new ResponsesEventStream(VIEW);
    const events = [
      ...stream.resumeAfter(7),
      ...numbered([delta('Whole answer.'), done()]).flatMap((e) => stream.accept(e)),
    ];
    expect(events[0]).toMatchObject({ type: 'response.in_progress', sequence_number: 8 });
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => 8 + i));
    expect(
      deltas(events)
        .map((e) => e.delta)
        .join(''),
    ).toBe('Whole answer.');
  });
});
