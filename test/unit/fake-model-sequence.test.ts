// The fake model server's per-request `sequence` (used by the reliability suite): each request of
// a model follows the next step (an HTTP failure, a dropped or a stalled stream), then answers.
import { InternalServerError, RateLimitError } from 'openai';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { sleep, waitFor } from '../helpers/wait';
import { fakeModelWithClient } from '../helpers/fake-model-client';

const fake = fakeModelWithClient();

/** The deltas read (into `text`, as they come) before the stream ended, failed, or `signal` fired. */
async function deltas(
  model: string,
  signal?: AbortSignal,
  text: string[] = [],
): Promise<{ text: string[]; error?: unknown }> {
  try {
    const stream = await fake.client.responses.create({ model, input: 'x', stream: true }, { signal });
    for await (const event of stream as AsyncIterable<ResponseStreamEvent>) {
      if (event.type === 'response.output_text.delta') text.push(event.delta);
    }
    return { text };
  } catch (error) {
    return { text, error };
  }
}

describe('fake model server: scripted sequences', () => {
  it('fails, drops and stalls the n-th request as scripted, then answers; script() restarts the sequence', async () => {
    fake.server.script('seq', {
      text: 'one two three four',
      sequence: [
        { fail: 429, retryAfterSeconds: 1 },
        { fail: 500 },
        { dropAfterDeltas: 2 },
        { stallAfterDeltas: 3 },
        'ok',
      ],
    });
    const first = await deltas('seq');
    expect(first.error).toBeInstanceOf(RateLimitError);
    expect((first.error as RateLimitError).headers?.get('retry-after')).toBe('1');
    expect((await deltas('seq')).error).toBeInstanceOf(InternalServerError);
    const dropped = await deltas('seq');
    expect(dropped.text).toEqual(['one', ' two']);
    expect(dropped.error).toMatchObject({ message: 'terminated' });

    // The stalled stream sends three deltas, then nothing, until the client gives up.
    const controller = new AbortController();
    const received: string[] = [];
    const stalled = deltas('seq', controller.signal, received);
    await waitFor(() => received.length >= 3, { what: 'the three deltas before the stall' });
    // A pause in which a fourth delta would arrive, were the stream not stalled.
    await sleep(100);
    controller.abort();
    expect((await stalled).text).toEqual(['one', ' two', ' three']);

    expect((await deltas('seq')).text.join('')).toBe('one two three four');
    expect((await deltas('seq')).text.join('')).toBe('one two three four');
    expect(fake.server.requestsFor('seq').map((r) => r.aborted)).toEqual([
      false,
      false,
      false,
      true,
      false,
      false,
    ]);

    fake.server.script('seq', { text: 'again', sequence: [{ fail: 503 }] });
    expect((await deltas('seq')).error).toMatchObject({ status: 503 });
    expect((await deltas('seq')).text.join('')).toBe('again');
  });
});
