// Proves the fake model server speaks the OpenAI Responses API well enough for the real openai SDK:
// streaming and non-streaming answers, scripted failures, dropped streams, hangs and request recording.
import { APIConnectionError, APIUserAbortError, RateLimitError } from 'openai';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { chunkText, fakeEmbedding } from '../fakes/fake-model-server';
import { waitFor } from '../helpers/wait';
import { fakeModelWithClient } from '../helpers/fake-model-client';

const fake = fakeModelWithClient();

async function collect(stream: AsyncIterable<ResponseStreamEvent>): Promise<ResponseStreamEvent[]> {
  const events: ResponseStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

const deltasOf = (events: ResponseStreamEvent[]): string[] =>
  events.flatMap((event) => (event.type === 'response.output_text.delta' ? [event.delta] : []));

describe('fake model server', () => {
  it('streams the canonical event sequence whose deltas concatenate to the text', async () => {
    fake.server.script('m-stream', {
      text: 'Hello streaming world',
      usage: { input_tokens: 7, output_tokens: 3 },
    });
    const stream = await fake.client.responses.create({ model: 'm-stream', input: 'hi', stream: true });
    const events = await collect(stream);

    expect(events.map((event) => event.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    expect(deltasOf(events)).toEqual(['Hello', ' streaming', ' world']);

    const completed = events[events.length - 1];
    if (completed?.type !== 'response.completed') throw new Error('expected response.completed last');
    expect(completed.response.usage).toEqual({
      input_tokens: 7,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 3,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 10,
    });
    expect(completed.response).toMatchObject({
      status: 'completed',
      model: 'm-stream',
      output: [
        {
          type: 'message',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Hello streaming world' }],
        },
      ],
    });
  });

  it('echoes the last user message by default, honours chunkSize and computes usage', async () => {
    fake.server.script('m-echo', { chunkSize: 4, deltaDelayMs: 15 });
    const started = Date.now();
    const stream = await fake.client.responses.create({
      model: 'm-echo',
      instructions: 'Be brief',
      input: [
        { role: 'user', content: 'first question' },
        { role: 'assistant', content: 'an answer' },
        { role: 'user', content: [{ type: 'input_text', text: 'second question' }] },
      ],
      stream: true,
    });
    const events = await collect(stream);
    const deltas = deltasOf(events);
    expect(deltas.join('')).toBe('Echo: second question');
    expect(deltas.slice(0, -1).every((delta) => delta.length === 4)).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(15 * (deltas.length - 1) - 5);

    const completed = events.find((event) => event.type === 'response.completed');
    if (completed?.type !== 'response.completed') throw new Error('missing response.completed');
    // 2 (instructions) + 2 + 2 + 2 input words; 3 output words.
    expect(completed.response.usage).toMatchObject({ input_tokens: 8, output_tokens: 3, total_tokens: 11 });
  });

  it('answers non-streaming requests with a Response object', async () => {
    fake.server.script('m-plain', { text: 'Plain answer' });
    const response = await fake.client.responses.create({
      model: 'm-plain',
      input: 'question',
      instructions: 'sys',
    });
    expect(response.output_text).toBe('Plain answer');
    expect(response).toMatchObject({
      object: 'response',
      status: 'completed',
      model: 'm-plain',
      instructions: 'sys',
      output: [{ type: 'message', role: 'assistant', status: 'completed' }],
      usage: { input_tokens: 2, output_tokens: 2, total_tokens: 4 },
    });
  });

  it('fails the first requests with the scripted status, then succeeds', async () => {
    fake.server.script('m-429', {
      text: 'finally',
      failFirst: { count: 2, status: 429, message: 'slow down', retryAfterSeconds: 3 },
    });
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const error: unknown = await fake.client.responses
        .create({ model: 'm-429', input: 'x' })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RateLimitError);
      const rateLimit = error as RateLimitError;
      expect(rateLimit.status).toBe(429);
      expect(rateLimit.headers?.get('retry-after')).toBe('3');
      expect(rateLimit.error).toMatchObject({ message: 'slow down', code: 'rate_limit_exceeded' });
    }
    const response = await fake.client.responses.create({ model: 'm-429', input: 'x' });
    expect(response.output_text).toBe('finally');
    expect(fake.server.requestsFor('m-429')).toHaveLength(3);

    fake.server.script('m-500', { failFirst: { count: 1, status: 500 } });
    await expect(
      fake.client.responses.create({ model: 'm-500', input: 'x', stream: true }),
    ).rejects.toMatchObject({
      status: 500,
    });
    const events = await collect(
      await fake.client.responses.create({ model: 'm-500', input: 'x', stream: true }),
    );
    expect(deltasOf(events).join('')).toBe('Echo: x');
  });

  it('drops the stream after K deltas on the first attempts, then completes', async () => {
    fake.server.script('m-drop', { text: 'one two three four', dropAfterDeltas: { attempts: 1, after: 2 } });
    const seen: ResponseStreamEvent[] = [];
    const stream = await fake.client.responses.create({ model: 'm-drop', input: 'x', stream: true });
    const failure = await (async () => {
      for await (const event of stream) seen.push(event);
    })().then(
      () => undefined,
      (error: unknown) => error,
    );
    // undici reports the truncated body as `TypeError: terminated` (from another realm, so no instanceof).
    expect(failure).toMatchObject({ name: 'TypeError', message: 'terminated' });
    expect(deltasOf(seen)).toEqual(['one', ' two']);
    expect(seen.map((event) => event.type)).not.toContain('response.completed');

    const events = await collect(
      await fake.client.responses.create({ model: 'm-drop', input: 'x', stream: true }),
    );
    expect(deltasOf(events).join('')).toBe('one two three four');
    expect(events[events.length - 1]?.type).toBe('response.completed');
    expect(fake.server.requestsFor('m-drop').map((request) => request.aborted)).toEqual([false, false]);

    // A non-streaming request counted as a drop loses its connection before any answer.
    fake.server.script('m-drop-plain', { dropAfterDeltas: { attempts: 1, after: 0 } });
    await expect(fake.client.responses.create({ model: 'm-drop-plain', input: 'x' })).rejects.toBeInstanceOf(
      APIConnectionError,
    );
    const retried = await fake.client.responses.create({ model: 'm-drop-plain', input: 'x' });
    expect(retried.output_text).toBe('Echo: x');
  });

  it('hangs until the client aborts and records the abort', async () => {
    fake.server.script('m-hang', { hang: true });
    const controller = new AbortController();
    const stream = await fake.client.responses.create(
      { model: 'm-hang', input: 'x', stream: true },
      { signal: controller.signal },
    );
    const types: string[] = [];
    const consumed = (async () => {
      for await (const event of stream) {
        types.push(event.type);
        controller.abort();
      }
    })();
    // The SDK ends the iteration quietly once the signal fires.
    await expect(consumed).resolves.toBeUndefined();
    expect(types).toEqual(['response.created']);
    await waitFor(() => fake.server.requestsFor('m-hang')[0]?.aborted === true);

    fake.server.script('m-silent', { hangBeforeHeaders: true });
    const silent = new AbortController();
    const pending = fake.client.responses.create(
      { model: 'm-silent', input: 'x' },
      { signal: silent.signal },
    );
    await waitFor(() => fake.server.requestsFor('m-silent').length === 1);
    silent.abort();
    await expect(pending).rejects.toBeInstanceOf(APIUserAbortError);
    await waitFor(() => fake.server.requestsFor('m-silent')[0]?.aborted === true);
  });

  it('records requests with body, instructions, input and headers', async () => {
    await fake.client.responses.create({ model: 'm-rec', input: 'first', instructions: 'be nice' });
    await collect(
      await fake.client.responses.create({
        model: 'm-rec',
        input: [{ role: 'user', content: 'second' }],
        stream: true,
      }),
    );
    // No authorization header at all: the server does not check keys.
    const anonymous = await fetch(`${fake.server.url}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'other', input: 'third' }),
    });
    expect(anonymous.status).toBe(200);

    expect(fake.server.requests.map((request) => request.model)).toEqual(['m-rec', 'm-rec', 'other']);
    const [first, second] = fake.server.requestsFor('m-rec');
    expect(first?.body).toMatchObject({ model: 'm-rec', input: 'first', instructions: 'be nice' });
    expect(first?.headers.authorization).toBe('Bearer x');
    expect(first?.aborted).toBe(false);
    expect(second?.body).toMatchObject({ input: [{ role: 'user', content: 'second' }], stream: true });
    expect(fake.server.requestsFor('other')[0]?.headers.authorization).toBeUndefined();

    fake.server.reset();
    expect(fake.server.requests).toHaveLength(0);
  });

  it('answers unknown paths with 404 and bad JSON with 400', async () => {
    const notFound = await fetch(`${fake.server.url}/chat/completions`, { method: 'POST', body: '{}' });
    expect(notFound.status).toBe(404);
    expect(await notFound.json()).toMatchObject({ error: { type: 'invalid_request_error' } });

    const badJson = await fetch(`${fake.server.url}/responses`, { method: 'POST', body: '{nope' });
    expect(badJson.status).toBe(400);
    expect(await badJson.json()).toMatchObject({ error: { type: 'invalid_request_error', param: null } });

    const prefixed = await fetch(`http://127.0.0.1:${fake.server.port}/openai/deployments/x/responses`, {
      method: 'POST',
      body: JSON.stringify({ model: 'm-any', input: 'ping' }),
    });
    expect(prefixed.status).toBe(200);
    expect(await prefixed.json()).toMatchObject({ output: [{ content: [{ text: 'Echo: ping' }] }] });
  });

  it('splits text into word deltas that keep their spaces', () => {
    expect(chunkText('Hello world  again ')).toEqual(['Hello', ' world', '  again', ' ']);
    expect(chunkText('abcdefg', 3)).toEqual(['abc', 'def', 'g']);
    expect(chunkText('')).toEqual([]);
  });
});

describe('fake model server: embeddings', () => {
  const norm = (v: number[]): number => Math.sqrt(v.reduce((sum, x) => sum + x * x, 0));

  it('answers the OpenAI embeddings wire format with deterministic, scriptable vectors', async () => {
    const answer = await fake.client.embeddings.create({
      model: 'e-default',
      input: ['hello world', 'goodbye'],
      encoding_format: 'float',
    });
    expect(answer).toMatchObject({
      object: 'list',
      model: 'e-default',
      usage: { prompt_tokens: 3, total_tokens: 3 },
      data: [
        { object: 'embedding', index: 0 },
        { object: 'embedding', index: 1 },
      ],
    });
    expect(answer.data.map((item) => item.embedding)).toEqual([
      fakeEmbedding('hello world', 8),
      fakeEmbedding('goodbye', 8),
    ]);
    // Not unit length, so a client that forgets to normalise is caught; the direction is the hash embedding.
    expect(norm(answer.data[0]!.embedding)).toBeCloseTo(1 + ('hello world'.length % 7), 10);
    expect(norm(fakeEmbedding('hello world', 8))).not.toBeCloseTo(1, 3);

    fake.server.scriptEmbeddings('e-big', { size: 32 });
    const single = await fake.client.embeddings.create({
      model: 'e-big',
      input: 'one',
      encoding_format: 'float',
    });
    expect(single.data).toHaveLength(1);
    expect(single.data[0]!.embedding).toHaveLength(32);
    const asked = await fake.client.embeddings.create({
      model: 'e-big',
      input: 'one',
      dimensions: 4,
      encoding_format: 'float',
    });
    expect(asked.data[0]!.embedding).toHaveLength(4);
  });

  it("speaks base64, the SDK's default encoding", async () => {
    const answer = await fake.client.embeddings.create({ model: 'e-b64', input: 'hello world' });
    expect(fake.server.embeddingRequestsFor('e-b64')[0]?.body.encoding_format).toBe('base64');
    const expected = fakeEmbedding('hello world', 8);
    answer.data[0]!.embedding.forEach((value, i) => expect(value).toBeCloseTo(expected[i]!, 5));
  });

  it('scripts failures, wrong sizes, delays and order per model', async () => {
    fake.server.scriptEmbeddings('e-fail', {
      failFirst: { count: 2, status: 429, message: 'slow down', retryAfterSeconds: 3 },
    });
    for (let i = 0; i < 2; i++) {
      const error: unknown = await fake.client.embeddings
        .create({ model: 'e-fail', input: 'x', encoding_format: 'float' })
        .catch((err: unknown) => err);
      expect(error).toBeInstanceOf(RateLimitError);
      expect((error as RateLimitError).headers?.get('retry-after')).toBe('3');
      expect((error as RateLimitError).message).toContain('slow down');
    }
    await expect(
      fake.client.embeddings.create({ model: 'e-fail', input: 'x', encoding_format: 'float' }),
    ).resolves.toMatchObject({ data: [{ index: 0 }] });

    fake.server.scriptEmbeddings('e-wrong', { size: 8, wrongSize: 3 });
    const wrong = await fake.client.embeddings.create({
      model: 'e-wrong',
      input: 'x',
      encoding_format: 'float',
    });
    expect(wrong.data[0]!.embedding).toHaveLength(3);

    fake.server.scriptEmbeddings('e-reverse', { reverseOrder: true, delayMs: 50 });
    const started = Date.now();
    const reversed = await fake.client.embeddings.create({
      model: 'e-reverse',
      input: ['a', 'b', 'c'],
      encoding_format: 'float',
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    expect(reversed.data.map((item) => item.index)).toEqual([2, 1, 0]);
    expect(reversed.data[0]!.embedding).toEqual(fakeEmbedding('c', 8));
  });

  it('rejects requests OpenAI rejects: no model, no input, an empty string', async () => {
    const post = (body: unknown): Promise<Response> =>
      fetch(`${fake.server.url}/embeddings`, { method: 'POST', body: JSON.stringify(body) });
    expect((await post({ input: 'x' })).status).toBe(400);
    expect((await post({ model: 'e' })).status).toBe(400);
    expect((await post({ model: 'e', input: [] })).status).toBe(400);
    expect((await post({ model: 'e', input: ['ok', ''] })).status).toBe(400);
    expect((await post({ model: 'e', input: [1, 2] })).status).toBe(400);
  });

  it('records embedding requests apart from model requests; reset clears scripts and records', async () => {
    fake.server.scriptEmbeddings('e-rec', { size: 2 });
    await fake.client.embeddings.create({ model: 'e-rec', input: 'x', encoding_format: 'float' });
    await fake.client.responses.create({ model: 'm-rec', input: 'hi' });
    expect(fake.server.embeddingRequests.map((request) => request.model)).toEqual(['e-rec']);
    expect(fake.server.embeddingRequestsFor('e-rec')[0]).toMatchObject({
      body: { model: 'e-rec', input: 'x' },
      headers: { authorization: 'Bearer x' },
      aborted: false,
    });
    expect(fake.server.requests.map((request) => request.model)).toEqual(['m-rec']);

    fake.server.reset();
    expect(fake.server.embeddingRequests).toHaveLength(0);
    const after = await fake.client.embeddings.create({
      model: 'e-rec',
      input: 'x',
      encoding_format: 'float',
    });
    expect(after.data[0]!.embedding).toHaveLength(8);
  });
});
