// The streams benchmark's clients: one answer asked of the model directly (openai SDK, the
// Responses protocol the product's model activity uses), of Agentry (POST /agents/{id}/execute,
// NDJSON) or of the floor (POST /chat, the same NDJSON), each timed at its first token and at
// every piece of text it receives, and checked exact. The fake model answers `Echo: <question>`,
// one word a delta; a question's first word is unique, so the model's emission times of an
// answer's deltas can be matched to the client's.
import type OpenAI from 'openai';
import { nowMs } from './env';

export interface Received {
  ttftMs: number;
  totalMs: number;
  /** Wall time of each piece of text received and the answer's length once it was in. */
  receipts: [at: number, length: number][];
  /** The answer put together, resets applied. */
  text: string;
}

/** A question of `deltas - 1` words whose answer `Echo: <question>` streams in `deltas` deltas. */
export function question(key: string, deltas: number): string {
  return [key, ...Array.from({ length: Math.max(0, deltas - 2) }, (_, i) => `w${i}`)].join(' ');
}

/** The system message of both columns' requests. */
export const SYSTEM = 'Answer briefly.';

export const expectedAnswer = (q: string): string => `Echo: ${q}`;

/** The model directly: `client.responses.create({stream: true})`, every delta event timed. */
export async function askDirect(client: OpenAI, model: string, q: string): Promise<Received> {
  const sentAt = nowMs();
  const stream = await client.responses.create({
    model,
    input: [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: q },
    ],
    stream: true,
  });
  const out: Received = { ttftMs: NaN, totalMs: NaN, receipts: [], text: '' };
  for await (const event of stream) {
    if (event.type !== 'response.output_text.delta') continue;
    const at = nowMs();
    if (out.receipts.length === 0) out.ttftMs = at - sentAt;
    out.text += event.delta;
    out.receipts.push([at, out.text.length]);
  }
  out.totalMs = nowMs() - sentAt;
  return out;
}

/** Agentry: an agent execution streamed as NDJSON. */
export const askAgentry = (url: string, headers: Record<string, string>, q: string, timeoutMs: number) =>
  askNdjson(url, headers, { prompt: { question: q }, classification: 'internal' }, timeoutMs);

/**
 * A POST answered with NDJSON events as Agentry's execute route writes them (`delta`, `reset`
 * starts the answer over, `error`, `done`): Agentry's column and the floor's.
 */
export async function askNdjson(
  url: string,
  headers: Record<string, string>,
  body: unknown,
  timeoutMs: number,
): Promise<Received> {
  const sentAt = nowMs();
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (res.status !== 200 || !res.body) throw new Error(`POST ${url} → ${res.status}: ${await res.text()}`);
  const out: Received = { ttftMs: NaN, totalMs: NaN, receipts: [], text: '' };
  const decoder = new TextDecoder();
  let buffered = '';
  let done = false;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    const at = nowMs();
    buffered += decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      if (!line.trim()) continue;
      const event = JSON.parse(line) as { type: string; text?: string; detail?: string };
      if (event.type === 'delta') {
        if (out.receipts.length === 0) out.ttftMs = at - sentAt;
        out.text += event.text ?? '';
        out.receipts.push([at, out.text.length]);
      } else if (event.type === 'reset') {
        out.text = '';
        out.receipts = [];
      } else if (event.type === 'error') {
        throw new Error(`in-band error: ${event.detail ?? line}`);
      } else if (event.type === 'done') {
        done = true;
      }
    }
  }
  if (!done) throw new Error('stream ended without done');
  out.totalMs = nowMs() - sentAt;
  return out;
}

/**
 * How long after its emission each delta of `answer` reached the client: the delta ends at a
 * known offset of the answer, and reached the client with the first receipt covering that offset.
 */
export function deliveryDelays(answer: string, emitted: number[], received: Received): number[] {
  const delays: number[] = [];
  const pieces = answer.match(/\s*\S+|\s+$/g) ?? [answer];
  let end = 0;
  let r = 0;
  for (const [k, piece] of pieces.entries()) {
    end += piece.length;
    while (r < received.receipts.length && received.receipts[r]![1] < end) r++;
    const receipt = received.receipts[r];
    const at = emitted[k];
    if (receipt === undefined || at === undefined) break;
    delays.push(receipt[0] - at);
  }
  return delays;
}

export interface ClientsRun {
  completed: number;
  errors: string[];
  inexact: number;
  ttft: number[];
  total: number[];
  /** Per answer: its key, its expected text and what the client received. */
  answers: { key: string; answer: string; received: Received }[];
}

/**
 * `clients` closed-loop clients, each asking `ask(q)` back to back `rounds` times, or until
 * `deadline` (wall ms) when `rounds` is 0; every answer checked exact.
 */
export async function runClients(
  clients: number,
  limit: { rounds: number; deadline: number },
  stop: () => boolean,
  keyOf: (client: number, i: number) => string,
  deltas: number,
  ask: (q: string) => Promise<Received>,
): Promise<ClientsRun> {
  const out: ClientsRun = { completed: 0, errors: [], inexact: 0, ttft: [], total: [], answers: [] };
  const more = (i: number) => !stop() && (limit.rounds > 0 ? i < limit.rounds : nowMs() < limit.deadline);
  const client = async (c: number): Promise<void> => {
    for (let i = 0; more(i); i++) {
      const key = keyOf(c, i);
      const q = question(key, deltas);
      try {
        const received = await ask(q);
        const answer = expectedAnswer(q);
        if (received.text !== answer) {
          out.inexact += 1;
          out.errors.push(
            `inexact answer for ${key}: ${received.text.length} of ${answer.length} characters`,
          );
          continue;
        }
        out.completed += 1;
        out.ttft.push(received.ttftMs);
        out.total.push(received.totalMs);
        out.answers.push({ key, answer, received });
      } catch (err) {
        out.errors.push((err as Error).message);
      }
    }
  };
  await Promise.all(Array.from({ length: clients }, (_, c) => client(c)));
  return out;
}
