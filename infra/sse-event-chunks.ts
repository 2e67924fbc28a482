// A model server's event stream handed to the openai SDK cut at the ends of events (issue 33).
// The SDK's parser appends each network chunk to what it holds of an unfinished event and scans
// all of it again for the blank line that ends one: a provider's last events carry the whole
// answer each (`output_text.done`, `content_part.done`, `output_item.done`, `response.completed`),
// so a 1 MB answer arriving in 64 KB chunks was copied and scanned over and over, about half a
// second of CPU in one stretch of the event loop (measured with the fake: 450 ms per answer in
// the SDK's `findDoubleNewlineIndex` and `iterSSEChunks`). Cut at event ends, each byte is scanned
// once. No event waits: it is passed on as soon as its last byte arrives, as the SDK would.
/** How the SDK reads an event's end: a blank line after LF, CR or CRLF line ends. */
const EVENT_ENDS = ['\n\n', '\r\r', '\r\n\r\n'].map((end) => Buffer.from(end));

/** Just past the last event end in `bytes`, or -1 (natively searched: each byte once or so). */
function lastEventEnd(bytes: Uint8Array): number {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let last = -1;
  for (const end of EVENT_ENDS) {
    const at = view.lastIndexOf(end);
    if (at >= 0) last = Math.max(last, at + end.length);
  }
  return last;
}

function concat(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** Passes on whole events only (several at once when a chunk holds them); the rest at the end. */
export function sseEventChunks(): TransformStream<Uint8Array, Uint8Array> {
  let pending: Uint8Array[] = [];
  /** The last bytes held (at most 3): an event end may begin in them and end in the next chunk. */
  let tail = new Uint8Array(0);
  return new TransformStream({
    transform(chunk, controller) {
      const probe = tail.length > 0 ? concat([tail, chunk]) : chunk;
      const end = lastEventEnd(probe);
      if (end < 0) {
        pending.push(chunk);
        tail = probe.slice(Math.max(0, probe.length - 3));
        return;
      }
      const cut = end - tail.length;
      pending.push(chunk.subarray(0, cut));
      controller.enqueue(concat(pending));
      const rest = chunk.subarray(cut);
      pending = rest.length > 0 ? [rest] : [];
      tail = rest.slice(Math.max(0, rest.length - 3));
    },
    flush(controller) {
      if (pending.length > 0) controller.enqueue(concat(pending));
    },
  });
}

/** `fetch` for the openai SDK: event-stream bodies come cut at event ends; anything else as it is. */
export const fetchWholeEvents: typeof fetch = async (input, init) => {
  const res = await fetch(input, init);
  if (!res.body || !(res.headers.get('content-type') ?? '').includes('text/event-stream')) return res;
  return new Response(res.body.pipeThrough(sseEventChunks()), {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
  });
};
