// Proves the fake model server's background mode (issue 27) through the real openai SDK: a
// background response keeps generating after its connection is cut, a resume after event N gets
// exactly the events after N, a cancel stops it, a forgotten response answers 404, and creates,
// resumes and cancels are counted.
import { NotFoundError } from 'openai';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { sleep, waitFor } from '../helpers/wait';
import { fakeModelWithClient } from '../helpers/fake-model-client';

const fake = fakeModelWithClient();

/** Reads a stream until it ends or breaks; the events read either way. */
async function read(stream: AsyncIterable<ResponseStreamEvent>): Promise<ResponseStreamEvent[]> {
  const events: ResponseStreamEvent[] = [];
  try {
    for await (const event of stream) events.push(event);
  } catch {
    // cut off: the events so far
  }
  return events;
}

const text = (events: ResponseStreamEvent[]): string =>
  events.map((e) => (e.type === 'response.output_text.delta' ? e.delta : '')).join('');

const create = (model: string) =>
  fake.client.responses.create({ model, input: 'hi', stream: true, background: true });

describe('fake model server: background responses', () => {
  it('a connection cut after 6 events; the resume after the last one read continues with the rest, numbered on', async () => {
    fake.server.script('bg-drop', {
      text: 'one two three four five six seven',
      deltaDelayMs: 20,
      background: { dropConnection: { afterEvents: 6 } },
    });
    const first = await read(await create('bg-drop'));
    expect(first).toHaveLength(6);
    expect(first.map((e) => e.sequence_number)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(first[0]).toMatchObject({ type: 'response.created', response: { background: true } });
    const id = (first[0] as { response: { id: string } }).response.id;
    const rest = await read(
      await fake.client.responses.retrieve(id, { stream: true, starting_after: first[5]!.sequence_number }),
    );
    expect(rest[0]!.sequence_number).toBe(6);
    expect(rest[rest.length - 1]!.type).toBe('response.completed');
    expect(text(first) + text(rest)).toBe('one two three four five six seven');
    expect(fake.server.backgroundCounts('bg-drop')).toMatchObject({ creates: 1, resumes: 1, cancels: 0 });
    expect(fake.server.backgroundCounts('bg-drop').resumedAfter).toEqual([5]);
    // The create is a model request; the resume is not.
    expect(fake.server.requestsFor('bg-drop')).toHaveLength(1);
  });

  it('cancel stops generating and ends open streams; the cancel is counted with its time', async () => {
    fake.server.script('bg-cancel', { text: 'a b c d e f g h i j k l', deltaDelayMs: 50 });
    const stream = await create('bg-cancel');
    const events: ResponseStreamEvent[] = [];
    const reading = (async () => {
      for await (const event of stream) events.push(event);
    })();
    await waitFor(() => events.length >= 6, { what: 'two deltas' });
    const id = (events[0] as { response: { id: string } }).response.id;
    const before = Date.now();
    const cancelled = await fake.client.responses.cancel(id);
    expect(cancelled.status).toBe('cancelled');
    await reading;
    expect(events.some((e) => e.type === 'response.completed')).toBe(false);
    expect(fake.server.backgroundCounts('bg-cancel').cancels).toBe(1);
    expect(fake.server.backgroundCounts('bg-cancel').cancelledAt[0]).toBeGreaterThanOrEqual(before);
  });

  it('a forgotten response: resume and cancel answer 404', async () => {
    fake.server.script('bg-expire', { text: 'x y z', deltaDelayMs: 200, background: { expireAfterMs: 100 } });
    const first = await read(await create('bg-expire'));
    expect(first.some((e) => e.type === 'response.completed')).toBe(false);
    const id = (first[0] as { response: { id: string } }).response.id;
    await sleep(50);
    await expect(
      fake.client.responses.retrieve(id, { stream: true, starting_after: 1 }),
    ).rejects.toBeInstanceOf(NotFoundError);
    await expect(fake.client.responses.cancel(id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('without background the fake answers as before (no background counts)', async () => {
    fake.server.script('bg-none', { text: 'plain answer' });
    const events = await read(
      await fake.client.responses.create({ model: 'bg-none', input: 'hi', stream: true }),
    );
    expect(text(events)).toBe('plain answer');
    expect(fake.server.backgroundCounts('bg-none')).toMatchObject({ creates: 0, resumes: 0, cancels: 0 });
  });

  it.each([
    ['repeat', [0, 1, 2, 3, 4, 5, 3, 4, 5, 6, 7]],
    ['swap', [0, 1, 2, 3, 5, 4, 6, 7]],
  ] as const)(
    'issue 33: disorder %s: the create writes events out of order once; a resume streams in order',
    async (kind, order) => {
      fake.server.script(`bg-${kind}`, {
        text: 'one two three four',
        background: { disorder: { kind, at: kind === 'repeat' ? 5 : 4 } },
      });
      const events = await read(await create(`bg-${kind}`));
      expect(events.map((e) => e.sequence_number).slice(0, order.length)).toEqual(order);
      expect(events[events.length - 1]!.type).toBe('response.completed');
      const id = (events[0] as { response: { id: string } }).response.id;
      const again = await read(await fake.client.responses.retrieve(id, { stream: true, starting_after: 3 }));
      expect(again.map((e) => e.sequence_number)).toEqual(again.map((_, i) => i + 4));
    },
  );
});
