// Issue 33: a model server's event stream reaches the openai SDK cut at event ends
// (infra/sse-event-chunks.ts), so the SDK's parser scans each byte once instead of rescanning an
// unfinished 1 MB event at every network chunk. Whatever the network's cuts, the bytes and the
// events the SDK reads are the same; every chunk but the last ends an event; none waits longer
// than its own last byte.
import fc from 'fast-check';
import { _iterSSEMessages } from 'openai/core/streaming';
import { sseEventChunks } from '../../infra/sse-event-chunks';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The chunks the transform passes on when `bytes` arrive cut at `cuts`. */
async function rechunk(bytes: Uint8Array, cuts: number[]): Promise<Uint8Array[]> {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const pieces = [0, ...points, bytes.length].flatMap((at, i, all) =>
    i === 0 ? [] : [bytes.subarray(all[i - 1]!, at)],
  );
  const source = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const piece of pieces) if (piece.length > 0) controller.enqueue(piece);
      controller.close();
    },
  });
  const out: Uint8Array[] = [];
  const reader = source.pipeThrough(sseEventChunks()).getReader();
  for (let r = await reader.read(); !r.done; r = await reader.read()) out.push(r.value);
  return out;
}

/** The events the SDK's own parser reads from the chunks. */
async function sdkEvents(chunks: Uint8Array[]): Promise<{ event: string | null; data: string }[]> {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  const events: { event: string | null; data: string }[] = [];
  for await (const sse of _iterSSEMessages(new Response(body), new AbortController()))
    events.push({ event: sse.event, data: sse.data });
  return events;
}

const stream = (nl: string, withEvent: boolean) =>
  encoder.encode(
    [
      `: keep-alive${nl}${nl}`,
      ...['{"a":1}', `{"text":"${'x'.repeat(300)}"}`, '{"b":"é€中"}'].map(
        (data, i) => `${withEvent ? `event: e${i}${nl}` : ''}data: ${data}${nl}${nl}`,
      ),
      // An unfinished event at the end: passed on too, for the SDK to decide about.
      `data: {"cut":`,
    ].join(''),
  );

const endsAnEvent = (chunk: Uint8Array) => /(\n\n|\r\r|\r\n\r\n)$/.test(decoder.decode(chunk));

describe('sseEventChunks', () => {
  it.each([
    ['LF', '\n', true],
    ['CRLF', '\r\n', true],
    ['CR', '\r', false],
  ])(
    '%s line ends, whatever the network cuts: the same bytes and SDK events; each chunk but the last ends an event',
    async (_, nl, withEvent) => {
      const bytes = stream(nl, withEvent);
      const expected = await sdkEvents([bytes]);
      expect(expected.length).toBeGreaterThanOrEqual(3);
      await fc.assert(
        fc.asyncProperty(fc.array(fc.nat(), { maxLength: 40 }), async (cuts) => {
          const chunks = await rechunk(bytes, cuts);
          expect(decoder.decode(Buffer.concat(chunks))).toBe(decoder.decode(bytes));
          expect(chunks.slice(0, -1).every(endsAnEvent)).toBe(true);
          expect(await sdkEvents(chunks)).toEqual(expected);
        }),
        { numRuns: 150 },
      );
    },
  );

  it('an event is passed on with its last byte: a chunk that completes one is not held for the next', async () => {
    const chunks = await rechunk(encoder.encode('data: 1\n\ndata: 2\n'), [5, 9]);
    expect(chunks.map((c) => decoder.decode(c))).toEqual(['data: 1\n\n', 'data: 2\n']);
  });

  it('an event end split between chunks (CRLF blank line across two reads) is found', async () => {
    const chunks = await rechunk(encoder.encode('data: 1\r\n\r\ndata: 2\r\n\r\n'), [9, 10, 11]);
    expect(chunks.map((c) => decoder.decode(c))).toEqual(['data: 1\r\n\r\n', 'data: 2\r\n\r\n']);
  });
});
