// The Responses API's background mode in the fake model server (issue 27): a response created with
// `background: true, stream: true` generates on the server whatever happens to the connection that
// created it; every event carries a `sequence_number`; `GET <prefix>/responses/{id}?stream=true&
// starting_after=N` streams it again after event N; `POST <prefix>/responses/{id}/cancel` stops it.
// Scripted faults: connections cut after K events, and a response the server forgets (a resume or
// a cancel then answers 404). Creates, resumes and cancels are counted per model.
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';

export interface FakeBackgroundBehaviour {
  /**
   * The first `times` connections to a response (its create, then each resume; default 1) are cut
   * after `afterEvents` events each; the response goes on generating.
   */
  dropConnection?: { afterEvents: number; times?: number };
  /** The server forgets the response this many ms after its creation (it stops generating). */
  expireAfterMs?: number;
  /**
   * The create's connection writes the events out of order once (a provider or proxy replaying on
   * its own): `repeat` writes events `at - 2`..`at` again right after event `at`; `swap` writes
   * event `at + 1` before event `at`. Resumes stream in order.
   */
  disorder?: { kind: 'repeat' | 'swap'; at: number };
}

export interface BackgroundCounts {
  creates: number;
  resumes: number;
  cancels: number;
  /** When each cancel arrived (epoch ms). */
  cancelledAt: number[];
  /** The `starting_after` of each resume (undefined: from the start). */
  resumedAfter: (number | undefined)[];
  /** The response each resume asked for. */
  resumedIds: string[];
}

export interface BackgroundAnswer {
  model: string;
  chunks: string[];
  text: string;
  delayMs: number;
  usage: Record<string, unknown>;
  behaviour: FakeBackgroundBehaviour;
  /** Marks the creating request as cut by the server (not aborted by its client). */
  markDropped(): void;
}

type Listener = { write(event: Record<string, unknown>): void; end(): void };

interface Entry {
  id: string;
  model: string;
  status: 'in_progress' | 'completed' | 'cancelled';
  events: Record<string, unknown>[];
  listeners: Set<Listener>;
  finished: boolean;
  forgotten: boolean;
  dropsLeft: number;
  dropAfter: number;
  timers: NodeJS.Timeout[];
}

const newId = (prefix: string): string => `${prefix}_${randomBytes(12).toString('hex')}`;

function notFound(res: ServerResponse, id: string): void {
  res.writeHead(404, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      error: {
        message: `Response with id '${id}' not found.`,
        type: 'invalid_request_error',
        code: null,
        param: null,
      },
    }),
  );
}

export class BackgroundResponses {
  private readonly entries = new Map<string, Entry>();
  private readonly counts = new Map<string, BackgroundCounts>();

  countsFor(model: string): BackgroundCounts {
    let counts = this.counts.get(model);
    if (!counts) {
      counts = { creates: 0, resumes: 0, cancels: 0, cancelledAt: [], resumedAfter: [], resumedIds: [] };
      this.counts.set(model, counts);
    }
    return counts;
  }

  reset(): void {
    this.counts.clear();
  }

  close(): void {
    for (const entry of this.entries.values()) this.stop(entry);
  }

  /**
   * POST /responses with background and stream: starts generating and streams from the start;
   * returns the response's id.
   */
  create(res: ServerResponse, answer: BackgroundAnswer): string {
    const entry: Entry = {
      id: newId('resp'),
      model: answer.model,
      status: 'in_progress',
      events: [],
      listeners: new Set(),
      finished: false,
      forgotten: false,
      dropsLeft: answer.behaviour.dropConnection ? (answer.behaviour.dropConnection.times ?? 1) : 0,
      dropAfter: answer.behaviour.dropConnection?.afterEvents ?? 0,
      timers: [],
    };
    this.entries.set(entry.id, entry);
    this.countsFor(answer.model).creates += 1;
    this.attach(res, entry, -1, answer.markDropped, answer.behaviour.disorder);
    void this.generate(entry, answer);
    if (answer.behaviour.expireAfterMs !== undefined) {
      entry.timers.push(setTimeout(() => this.forget(entry), answer.behaviour.expireAfterMs));
    }
    return entry.id;
  }

  /** GET /responses/{id}: streams again after `startingAfter`, or answers the response object. */
  retrieve(res: ServerResponse, id: string, query: URLSearchParams): void {
    const entry = this.entries.get(id);
    const streamed = query.get('stream') === 'true';
    const raw = query.get('starting_after');
    const after = raw === null ? undefined : Number(raw);
    if (entry && streamed) {
      // Counted also when answered 404: the resume was asked for.
      const counts = this.countsFor(entry.model);
      counts.resumes += 1;
      counts.resumedAfter.push(after);
      counts.resumedIds.push(id);
    }
    if (!entry || entry.forgotten) return notFound(res, id);
    if (!streamed) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(this.responseObject(entry)));
      return;
    }
    this.attach(res, entry, after ?? -1, () => undefined);
  }

  /** POST /responses/{id}/cancel: stops generating; open streams end. */
  cancel(res: ServerResponse, id: string): void {
    const entry = this.entries.get(id);
    if (!entry || entry.forgotten) return notFound(res, id);
    const counts = this.countsFor(entry.model);
    counts.cancels += 1;
    counts.cancelledAt.push(Date.now());
    if (!entry.finished) entry.status = 'cancelled';
    this.stop(entry);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(this.responseObject(entry)));
  }

  private responseObject(entry: Entry, usage?: Record<string, unknown>, text?: string) {
    const output =
      text === undefined
        ? []
        : [
            {
              id: newId('msg'),
              type: 'message',
              status: 'completed',
              role: 'assistant',
              content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
            },
          ];
    return {
      id: entry.id,
      object: 'response',
      status: entry.status,
      background: true,
      model: entry.model,
      error: null,
      incomplete_details: null,
      output,
      usage: usage ?? null,
    };
  }

  private emit(entry: Entry, type: string, payload: Record<string, unknown>): void {
    const event = { type, sequence_number: entry.events.length, ...payload };
    entry.events.push(event);
    for (const listener of [...entry.listeners]) listener.write(event);
  }

  private async generate(entry: Entry, answer: BackgroundAnswer): Promise<void> {
    const running = (): boolean => entry.status === 'in_progress' && !entry.forgotten;
    const itemId = newId('msg');
    const position = { item_id: itemId, output_index: 0, content_index: 0 };
    const part = { type: 'output_text', text: '', annotations: [], logprobs: [] };
    this.emit(entry, 'response.created', { response: this.responseObject(entry) });
    this.emit(entry, 'response.in_progress', { response: this.responseObject(entry) });
    this.emit(entry, 'response.output_item.added', {
      output_index: 0,
      item: { id: itemId, type: 'message', status: 'in_progress', content: [], role: 'assistant' },
    });
    this.emit(entry, 'response.content_part.added', { ...position, part });
    for (const [index, delta] of answer.chunks.entries()) {
      if (index > 0 && answer.delayMs > 0) {
        await new Promise<void>((resolve) => entry.timers.push(setTimeout(resolve, answer.delayMs)));
      }
      if (!running()) return;
      this.emit(entry, 'response.output_text.delta', { ...position, delta, logprobs: [] });
    }
    const done = { ...part, text: answer.text };
    this.emit(entry, 'response.output_text.done', { ...position, text: answer.text, logprobs: [] });
    this.emit(entry, 'response.content_part.done', { ...position, part: done });
    entry.status = 'completed';
    this.emit(entry, 'response.completed', {
      response: this.responseObject(entry, answer.usage, answer.text),
    });
    this.stop(entry);
  }

  /** Ends generation and every open stream of the response. */
  private stop(entry: Entry): void {
    entry.finished = true;
    for (const timer of entry.timers) clearTimeout(timer);
    for (const listener of [...entry.listeners]) listener.end();
  }

  private forget(entry: Entry): void {
    entry.forgotten = true;
    this.stop(entry);
  }

  /** Streams the response's events after `after` on `res`, then each new one until it ends. */
  private attach(
    res: ServerResponse,
    entry: Entry,
    after: number,
    markDropped: () => void,
    disorder?: FakeBackgroundBehaviour['disorder'],
  ): void {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-request-id': newId('req'),
    });
    const dropAfter = entry.dropsLeft > 0 ? (entry.dropsLeft--, entry.dropAfter) : undefined;
    let written = 0;
    let held: Record<string, unknown> | undefined;
    const write = (event: Record<string, unknown>): void => {
      if (res.destroyed || !entry.listeners.has(listener)) return;
      res.write(`event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`);
      written += 1;
      if (dropAfter !== undefined && written >= dropAfter) {
        entry.listeners.delete(listener);
        markDropped();
        // Let the client read what was written, then close mid-body (a network drop).
        setTimeout(() => {
          const socket = res.socket;
          if (!socket) return void res.destroy();
          socket.end();
          socket.once('finish', () => socket.destroy());
        }, 50);
      }
    };
    const listener: Listener = {
      write: (event) => {
        const seq = event.sequence_number as number;
        if (seq <= after) return;
        if (disorder?.kind === 'swap' && seq === disorder.at) return void (held = event);
        write(event);
        if (held && seq === disorder!.at + 1) write(held);
        if (disorder?.kind === 'repeat' && seq === disorder.at) {
          for (const again of entry.events.slice(Math.max(0, seq - 2), seq + 1)) write(again);
        }
      },
      end: () => {
        entry.listeners.delete(listener);
        if (!res.destroyed && !res.writableEnded) res.end();
      },
    };
    res.on('close', () => entry.listeners.delete(listener));
    entry.listeners.add(listener);
    for (const event of [...entry.events]) if (entry.listeners.has(listener)) listener.write(event);
    if (entry.finished) listener.end();
  }
}
