// Issue 33: the fake model server puts on the wire what OpenAI-compatible providers send, read by
// the real openai SDK: empty deltas where scripted, a reasoning item before the message, a
// refusal, several items and parts with annotations, CRLF / `data:`-only / keep-alive framing, the
// faults that end a stream early, `retry-after` as an HTTP date, and a request whose headers never
// come. Each event shape follows openai's responses.d.ts.
import { RateLimitError } from 'openai';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { waitFor } from '../helpers/wait';
import { fakeModelWithClient } from '../helpers/fake-model-client';

const fake = fakeModelWithClient();

/** The events read before the stream ended, and what it threw, if it did. */
async function read(model: string): Promise<{ events: ResponseStreamEvent[]; error?: unknown }> {
  const events: ResponseStreamEvent[] = [];
  try {
    const stream = await fake.client.responses.create({ model, input: 'x', stream: true });
    for await (const event of stream) events.push(event);
    return { events };
  } catch (error) {
    return { events, error };
  }
}

const typesOf = (events: ResponseStreamEvent[]) => events.map((e) => e.type);
const deltasOf = (events: ResponseStreamEvent[]) =>
  events.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : []));

/** The raw bytes of a streamed answer, as a provider wrote them. */
async function raw(model: string): Promise<string> {
  const res = await fetch(`${fake.server.url}/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, input: 'x', stream: true }),
  });
  return res.text();
}

describe('fake model server: what providers put on the wire', () => {
  it('deltas as scripted, empty ones included, numbered on', async () => {
    fake.server.script('empty', { deltas: ['', 'Hello', '', ' world', ''] });
    const { events } = await read('empty');
    expect(deltasOf(events)).toEqual(['', 'Hello', '', ' world', '']);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.find((e) => e.type === 'response.output_text.done')).toMatchObject({ text: 'Hello world' });
  });

  it('a reasoning item with summary deltas before the message; its tokens in output_tokens and reasoning_tokens', async () => {
    fake.server.script('reasoning', {
      text: 'The answer',
      reasoning: { summary: ['Thinking', ' hard'], tokens: 40 },
    });
    const { events } = await read('reasoning');
    expect(typesOf(events).slice(0, 9)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done',
    ]);
    expect(events[2]).toMatchObject({ output_index: 0, item: { type: 'reasoning' } });
    expect(events[9]).toMatchObject({
      type: 'response.output_item.added',
      output_index: 1,
      item: { type: 'message' },
    });
    expect(deltasOf(events)).toEqual(['The', ' answer']);
    const completed = events[events.length - 1]!;
    if (completed.type !== 'response.completed') throw new Error('expected response.completed last');
    expect(completed.response.usage).toMatchObject({
      output_tokens: 42,
      output_tokens_details: { reasoning_tokens: 40 },
    });
    expect(completed.response.output.map((item) => item.type)).toEqual(['reasoning', 'message']);
  });

  it('a refusal: refusal deltas and done, no output_text, and the response completes with a refusal part', async () => {
    fake.server.script('refusal', { refusal: "I can't help with that." });
    const { events } = await read('refusal');
    expect(deltasOf(events)).toEqual([]);
    const refused = events.flatMap((e) => (e.type === 'response.refusal.delta' ? [e.delta] : []));
    expect(refused.join('')).toBe("I can't help with that.");
    expect(events.find((e) => e.type === 'response.refusal.done')).toMatchObject({
      refusal: "I can't help with that.",
    });
    const completed = events[events.length - 1]!;
    if (completed.type !== 'response.completed') throw new Error('expected response.completed last');
    expect(completed.response.output).toMatchObject([{ type: 'message', content: [{ type: 'refusal' }] }]);
  });

  it('several message items of several parts, each part annotated after its first delta', async () => {
    fake.server.script('items', { items: [['One.', ' Two.'], [' Three.']], annotations: true });
    const { events } = await read('items');
    expect(deltasOf(events).join('')).toBe('One. Two. Three.');
    const added = events.filter((e) => e.type === 'response.output_item.added');
    expect(added.map((e) => e.output_index)).toEqual([0, 1]);
    const parts = events.filter((e) => e.type === 'response.content_part.added');
    expect(parts.map((e) => [e.output_index, e.content_index])).toEqual([
      [0, 0],
      [0, 1],
      [1, 0],
    ]);
    expect(events.filter((e) => e.type === 'response.output_text.annotation.added')).toHaveLength(3);
    expect(events.find((e) => e.type === 'response.output_text.annotation.added')).toMatchObject({
      annotation: { type: 'url_citation', url: 'https://example.com/' },
    });
  });

  it('CRLF, `data:` only and keep-alive comments: different bytes, the same events for the SDK', async () => {
    fake.server.script('plain', { text: 'Same events here' });
    fake.server.script('framed', {
      text: 'Same events here',
      wire: { crlf: true, dataOnly: true, keepAlive: true },
    });
    const bytes = await raw('framed');
    expect(bytes).toContain('\r\n\r\n');
    expect(bytes).toContain(': keep-alive\r\n');
    expect(bytes).not.toMatch(/^event:/m);
    expect(bytes.replace(/\r\n/g, '')).not.toContain('\n');
    const plain = await read('plain');
    const framed = await read('framed');
    expect(typesOf(framed.events)).toEqual(typesOf(plain.events));
    expect(deltasOf(framed.events)).toEqual(['Same', ' events', ' here']);
  });

  it.each([
    ['failed', 'response.failed'],
    ['error', 'error'],
    ['end', 'response.output_text.delta'],
  ] as const)(
    'fault %s after 2 deltas: the stream ends with %s, without response.completed',
    async (fault, last) => {
      fake.server.script(`fault-${fault}`, { text: 'a b c d', sequence: [{ fault, afterDeltas: 2 }] });
      const { events, error } = await read(`fault-${fault}`);
      expect(error).toBeUndefined();
      expect(deltasOf(events)).toEqual(['a', ' b']);
      expect(events[events.length - 1]!.type).toBe(last);
      // The next request answers whole.
      expect(deltasOf((await read(`fault-${fault}`)).events).join('')).toBe('a b c d');
    },
  );

  it('a socket cut in the middle of an event: half its bytes arrive, then the connection breaks', async () => {
    fake.server.script('cut', { text: 'a b c d', sequence: [{ fault: 'cut-mid-event', afterDeltas: 2 }] });
    const { events, error } = await read('cut');
    expect(deltasOf(events)).toEqual(['a', ' b']);
    // undici's TypeError, made outside jest's realm: matched by what it says.
    expect(String(error)).toMatch(/terminated/);
    fake.server.script('cut', { text: 'a b c d', sequence: [{ fault: 'cut-mid-event', afterDeltas: 2 }] });
    const bytes = await raw('cut').catch(() => 'broken');
    expect(bytes).toBe('broken');
    expect(fake.server.requestsFor('cut').every((r) => !r.aborted)).toBe(true);
  });

  it('retry-after as an HTTP date, the given number of seconds ahead', async () => {
    fake.server.script('dated', { sequence: [{ fail: 503, retryAfterDateIn: 5 }] });
    const error = await fake.client.responses.create({ model: 'dated', input: 'x' }).catch((e: unknown) => e);
    expect((error as { status?: number }).status).toBe(503);
    const header = (error as { headers: Headers }).headers.get('retry-after')!;
    expect(header).toMatch(/^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
    const ahead = Date.parse(header) - Date.now();
    expect(ahead).toBeGreaterThan(3_000);
    expect(ahead).toBeLessThanOrEqual(5_000);
    fake.server.script('dated', { sequence: [{ fail: 429, retryAfterSeconds: 2 }] });
    const limited = await fake.client.responses
      .create({ model: 'dated', input: 'x' })
      .catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(RateLimitError);
    expect((limited as RateLimitError).headers.get('retry-after')).toBe('2');
  });

  it('a step whose headers never come: the request stays open until the client gives up; the next answers', async () => {
    fake.server.script('silent', { text: 'late answer', sequence: [{ hangBeforeHeaders: true }] });
    const gaveUp = await fake.client.responses
      .create({ model: 'silent', input: 'x', stream: true }, { signal: AbortSignal.timeout(300) })
      .catch((e: unknown) => e);
    expect(gaveUp).toBeInstanceOf(Error);
    await waitFor(() => fake.server.requestsFor('silent')[0]?.aborted === true, { what: 'the abort' });
    expect(deltasOf((await read('silent')).events).join('')).toBe('late answer');
  });
});
