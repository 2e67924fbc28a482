// SPEC §9.5: the event protocol clients see, made from the relay log by EventSequencer.
import fc from 'fast-check';
import { closingEvents, EventSequencer, type ClientEvent, type RelayEvent } from '../../domain/stream-events';

const usage = { input_tokens: 3, output_tokens: 5 };

function run(events: RelayEvent[]): { seq: EventSequencer; out: ClientEvent[] } {
  const seq = new EventSequencer();
  const out = events.flatMap((e) => seq.accept(e));
  return { seq, out };
}

/** What a client shows: the text of the deltas after the last reset. */
function visibleText(events: ClientEvent[]): string {
  let text = '';
  for (const e of events) {
    if (e.type === 'reset') text = '';
    if (e.type === 'delta') text += e.text;
  }
  return text;
}

const seqs = (events: ClientEvent[]): number[] => events.map((e) => e.seq);
const types = (events: ClientEvent[]): string[] => events.map((e) => e.type);

describe('EventSequencer', () => {
  it('§9.6: a delta the relay holds twice (a resent command) is shown once; numbering restarts per attempt', () => {
    const { out } = run([
      { type: 'start', attempt: 1 },
      { type: 'delta', attempt: 1, text: 'once', n: 1 },
      { type: 'delta', attempt: 1, text: 'once', n: 1 },
      { type: 'delta', attempt: 1, text: ' more', n: 2 },
      { type: 'start', attempt: 2 },
      { type: 'delta', attempt: 2, text: 'again', n: 1 },
      { type: 'delta', attempt: 2, text: 'again', n: 1 },
      { type: 'done', attempt: 2, usage },
    ]);
    expect(out).toEqual([
      { type: 'delta', seq: 1, attempt: 1, text: 'once' },
      { type: 'delta', seq: 2, attempt: 1, text: ' more' },
      { type: 'reset', seq: 3, attempt: 2 },
      { type: 'delta', seq: 4, attempt: 2, text: 'again' },
      { type: 'done', seq: 5, attempt: 2, usage },
    ]);
  });

  it('§9.5: seq starts at 1 and strictly increases across attempts', () => {
    const { out } = run([
      { type: 'start', attempt: 1 },
      { type: 'delta', attempt: 1, text: 'Da' },
      { type: 'delta', attempt: 1, text: 'ta' },
      { type: 'start', attempt: 2 },
      { type: 'delta', attempt: 2, text: 'Data' },
      { type: 'done', attempt: 2, usage },
    ]);
    expect(out).toEqual([
      { type: 'delta', seq: 1, attempt: 1, text: 'Da' },
      { type: 'delta', seq: 2, attempt: 1, text: 'ta' },
      { type: 'reset', seq: 3, attempt: 2 },
      { type: 'delta', seq: 4, attempt: 2, text: 'Data' },
      { type: 'done', seq: 5, attempt: 2, usage },
    ]);
  });

  it('§9.5: start is internal: it emits nothing but marks the execution started', () => {
    const seq = new EventSequencer();
    expect(seq.started).toBe(false);
    expect(seq.accept({ type: 'start', attempt: 1 })).toEqual([]);
    expect(seq.started).toBe(true);
    expect(seq.accept({ type: 'delta', attempt: 1, text: 'x' })).toEqual([
      { type: 'delta', seq: 1, attempt: 1, text: 'x' },
    ]);
  });

  it('§9.5: no reset when attempt 1 failed before sending any text', () => {
    const { out } = run([
      { type: 'start', attempt: 1 },
      { type: 'start', attempt: 2 },
      { type: 'delta', attempt: 2, text: 'hello' },
      { type: 'done', attempt: 2, usage },
    ]);
    expect(types(out)).toEqual(['delta', 'done']);
    expect(out[0]).toEqual({ type: 'delta', seq: 1, attempt: 2, text: 'hello' });
  });

  it('§9.5: a reset is sent once per attempt that follows sent text, not for attempts without text', () => {
    const { out } = run([
      { type: 'delta', attempt: 1, text: 'a' },
      { type: 'start', attempt: 2 }, // reset: attempt 1 had sent "a"
      { type: 'start', attempt: 3 }, // no reset: the client holds no text now
      { type: 'delta', attempt: 3, text: 'b' },
    ]);
    expect(out).toEqual([
      { type: 'delta', seq: 1, attempt: 1, text: 'a' },
      { type: 'reset', seq: 2, attempt: 2 },
      { type: 'delta', seq: 3, attempt: 3, text: 'b' },
    ]);
  });

  it('§9.5: events of a lower attempt are dropped once a higher one was seen (zombie attempt)', () => {
    const { seq, out } = run([
      { type: 'delta', attempt: 1, text: 'old' },
      { type: 'delta', attempt: 2, text: 'new' },
      { type: 'delta', attempt: 1, text: ' zombie' },
      { type: 'start', attempt: 1 },
      { type: 'done', attempt: 1, usage },
      { type: 'delta', attempt: 2, text: '!' },
    ]);
    expect(out).toEqual([
      { type: 'delta', seq: 1, attempt: 1, text: 'old' },
      { type: 'reset', seq: 2, attempt: 2 },
      { type: 'delta', seq: 3, attempt: 2, text: 'new' },
      { type: 'delta', seq: 4, attempt: 2, text: '!' },
    ]);
    expect(seq.terminated).toBe(false);
    expect(seq.text).toBe('new!');
  });

  it('§9.5: exactly one terminal event; nothing follows done', () => {
    const seq = new EventSequencer();
    seq.accept({ type: 'delta', attempt: 1, text: 'x' });
    expect(seq.accept({ type: 'done', attempt: 1, usage })).toEqual([
      { type: 'done', seq: 2, attempt: 1, usage },
    ]);
    expect(seq.terminated).toBe(true);
    expect(seq.accept({ type: 'delta', attempt: 1, text: 'late' })).toEqual([]);
    expect(seq.accept({ type: 'delta', attempt: 2, text: 'late' })).toEqual([]);
    expect(seq.accept({ type: 'done', attempt: 2, usage })).toEqual([]);
    expect(seq.accept({ type: 'error', status: 502, detail: 'late' })).toEqual([]);
    expect(seq.recover('other', usage)).toEqual([]);
    expect(seq.text).toBe('x');
  });

  it('§9.5: error is terminal, carries status and detail, and nothing follows it', () => {
    const seq = new EventSequencer();
    seq.accept({ type: 'delta', attempt: 1, text: 'x' });
    expect(seq.accept({ type: 'error', status: 502, detail: 'Model server failed: 500 boom' })).toEqual([
      { type: 'error', seq: 2, status: 502, detail: 'Model server failed: 500 boom' },
    ]);
    expect(seq.terminated).toBe(true);
    expect(seq.accept({ type: 'done', attempt: 1, usage })).toEqual([]);
    expect(seq.accept({ type: 'error', status: 499, detail: 'again' })).toEqual([]);
  });

  it('§9.5: an error before anything else is seq 1', () => {
    expect(run([{ type: 'error', status: 499, detail: 'Execution cancelled' }]).out).toEqual([
      { type: 'error', seq: 1, status: 499, detail: 'Execution cancelled' },
    ]);
  });

  it('§9.6: synthesize makes the terminal event a closed workflow never published', () => {
    const seq = new EventSequencer();
    seq.accept({ type: 'delta', attempt: 2, text: 'x' });
    expect(seq.synthesize({ type: 'error', status: 503, detail: 'gone' })).toEqual({
      type: 'error',
      seq: 2,
      status: 503,
      detail: 'gone',
    });
    expect(seq.terminated).toBe(true);
    expect(seq.accept({ type: 'delta', attempt: 2, text: 'y' })).toEqual([]);

    const other = new EventSequencer();
    other.accept({ type: 'delta', attempt: 3, text: 'x' });
    expect(other.synthesize({ type: 'done', usage })).toEqual({ type: 'done', seq: 2, attempt: 3, usage });

    // No event reached the relay: attempts still count from 1.
    expect(new EventSequencer().synthesize({ type: 'done', usage })).toEqual({
      type: 'done',
      seq: 1,
      attempt: 1,
      usage,
    });
  });

  it('§9.6: recover sends reset and the stored answer when the text received differs', () => {
    const seq = new EventSequencer();
    seq.accept({ type: 'delta', attempt: 1, text: 'Dat' });
    expect(seq.recover('Data!', usage)).toEqual([
      { type: 'reset', seq: 2, attempt: 1 },
      { type: 'delta', seq: 3, attempt: 1, text: 'Data!' },
      { type: 'done', seq: 4, attempt: 1, usage },
    ]);
    expect(seq.text).toBe('Data!');
    expect(seq.terminated).toBe(true);
  });

  it('§9.6: recover sends only done when the client already holds the answer', () => {
    const seq = new EventSequencer();
    seq.accept({ type: 'delta', attempt: 1, text: 'Da' });
    seq.accept({ type: 'delta', attempt: 1, text: 'ta' });
    expect(seq.recover('Data', usage)).toEqual([{ type: 'done', seq: 3, attempt: 1, usage }]);
  });

  it('§9.6: recover without any event received sends the answer without a reset', () => {
    const seq = new EventSequencer();
    expect(seq.recover('Data', usage)).toEqual([
      { type: 'delta', seq: 1, attempt: 1, text: 'Data' },
      { type: 'done', seq: 2, attempt: 1, usage },
    ]);
  });

  it('§9.6: recover after a reset with no new text does not reset again', () => {
    const seq = new EventSequencer();
    seq.accept({ type: 'delta', attempt: 1, text: 'a' });
    seq.accept({ type: 'start', attempt: 2 });
    const out = seq.recover('b', usage);
    expect(out).toEqual([
      { type: 'delta', seq: 3, attempt: 2, text: 'b' },
      { type: 'done', seq: 4, attempt: 2, usage },
    ]);
  });

  it('DX-2: a re-attaching reader numbers the same log identically', () => {
    const log: RelayEvent[] = [
      { type: 'delta', attempt: 1, text: 'a' },
      { type: 'delta', attempt: 2, text: 'b' },
      { type: 'done', attempt: 2, usage },
    ];
    expect(run(log).out).toEqual(run(log).out);
  });

  // Random interleavings: each attempt publishes start, some deltas and maybe done, in order;
  // attempts' streams may interleave (a zombie attempt keeps publishing after its successor).
  const attemptStream = (attempt: number) =>
    fc
      .record({
        deltas: fc.array(fc.string({ maxLength: 4 }), { maxLength: 4 }),
        started: fc.boolean(),
      })
      .map(({ deltas, started }) => [
        ...(started ? [{ type: 'start' as const, attempt }] : []),
        ...deltas.map((text) => ({ type: 'delta' as const, attempt, text })),
      ]);

  const interleaving = fc
    .integer({ min: 1, max: 4 })
    .chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => attemptStream(i + 1))))
    .chain((streams) =>
      fc
        .array(fc.nat({ max: streams.length - 1 }), {
          minLength: streams.flat().length,
          maxLength: streams.flat().length,
        })
        .map((picks) => {
          // Merge the streams, keeping each one's own order; `picks` chooses which goes next.
          const queues = streams.map((s) => [...s]);
          const merged: RelayEvent[] = [];
          for (const pick of picks) {
            const next =
              queues.find((_, i) => i >= pick && queues[i]!.length > 0) ?? queues.find((q) => q.length > 0);
            merged.push(next!.shift()!);
          }
          return merged;
        }),
    );

  it('§9.5 (property): the client sees exactly the highest attempt, numbered 1..n', () => {
    fc.assert(
      fc.property(interleaving, fc.boolean(), (log, finish) => {
        const seq = new EventSequencer();
        const out = log.flatMap((e) => seq.accept(e));
        const highest = Math.max(0, ...log.map((e) => (e.type === 'error' ? 0 : e.attempt)));
        if (finish && highest > 0) out.push(...seq.accept({ type: 'done', attempt: highest, usage }));
        const expected = log
          .filter(
            (e): e is Extract<RelayEvent, { type: 'delta' }> => e.type === 'delta' && e.attempt === highest,
          )
          .map((e) => e.text)
          .join('');
        expect(visibleText(out)).toBe(expected);
        expect(seq.text).toBe(expected);
        expect(seqs(out)).toEqual(out.map((_, i) => i + 1));
        // Attempts never go down in what clients see, and resets only follow sent text.
        for (let i = 1; i < out.length; i++) {
          const prev = out[i - 1]!;
          const cur = out[i]!;
          if ('attempt' in prev && 'attempt' in cur) expect(cur.attempt).toBeGreaterThanOrEqual(prev.attempt);
          if (cur.type === 'reset') expect(out.slice(0, i).some((e) => e.type === 'delta')).toBe(true);
        }
        expect(out.filter((e) => e.type === 'done' || e.type === 'error')).toHaveLength(
          finish && highest > 0 ? 1 : 0,
        );
      }),
    );
  });

  it('§9.5/DX-2 (property): a retry that takes a stored answer ends every log with exactly that answer, adding no reset when readers already have it', () => {
    fc.assert(
      fc.property(interleaving, fc.string(), fc.boolean(), (log, other, sameText) => {
        const before = run(log);
        const answer = { text: sameText ? before.seq.text : other, usage };
        const retry = Math.max(1, ...log.map((e) => (e.type === 'error' ? 0 : e.attempt))) + 1;
        const closing = closingEvents(log, answer, retry);
        if (before.seq.terminated) {
          expect(closing).toEqual([]);
          return;
        }
        const { out } = run([...log, ...closing]);
        expect(visibleText(out)).toBe(answer.text);
        expect(out.filter((e) => e.type === 'done' || e.type === 'error')).toHaveLength(1);
        expect(seqs(out)).toEqual(out.map((_, i) => i + 1));
        if (answer.text === before.seq.text)
          expect(out.filter((e) => e.type === 'reset')).toEqual(before.out.filter((e) => e.type === 'reset'));
      }),
    );
  });
});

describe('issue 33: an answer the model stopped short', () => {
  const cut = { reason: 'max_output_tokens' };

  it('done carries incomplete_details to every reader, live, recovered or closing', () => {
    const live = new EventSequencer();
    live.accept({ type: 'start', attempt: 1 });
    live.accept({ type: 'delta', attempt: 1, text: 'Half', n: 1 });
    expect(live.accept({ type: 'done', attempt: 1, usage: usage, incomplete_details: cut })).toEqual([
      { type: 'done', seq: 2, attempt: 1, usage: usage, incomplete_details: cut },
    ]);
    expect(new EventSequencer().recover('Half', usage, cut).at(-1)).toMatchObject({
      incomplete_details: cut,
    });
    const log: RelayEvent[] = [{ type: 'delta', attempt: 1, text: 'Half', n: 1 }];
    expect(closingEvents(log, { text: 'Half', usage: usage, incomplete_details: cut }, 2)).toEqual([
      { type: 'done', attempt: 1, usage: usage, incomplete_details: cut },
    ]);
  });

  it('a complete answer says nothing of it', () => {
    expect(new EventSequencer().accept({ type: 'done', attempt: 1, usage: usage })[0]).not.toHaveProperty(
      'incomplete_details',
    );
  });
});

describe('closingEvents', () => {
  const relayed: RelayEvent[] = [
    { type: 'start', attempt: 1 },
    { type: 'delta', attempt: 1, text: 'Data ', n: 1 },
    { type: 'delta', attempt: 1, text: 'rotates.', n: 2 },
  ];

  it('§9.5: the whole answer relayed by attempt 1, stored, its completion lost: only `done` of attempt 1 follows (no reset, nothing repeated)', () => {
    expect(closingEvents(relayed, { text: 'Data rotates.', usage }, 2)).toEqual([
      { type: 'done', attempt: 1, usage },
    ]);
  });

  it('§9.5: part of the answer missing from the relay: the whole answer follows under the retry, after a reset for readers that had text', () => {
    const closing = closingEvents(relayed.slice(0, 2), { text: 'Data rotates.', usage }, 2, { chain: 'x' });
    expect(closing).toEqual([
      { type: 'delta', attempt: 2, text: 'Data rotates.', n: 1 },
      { type: 'done', attempt: 2, usage, extra: { chain: 'x' } },
    ]);
    const { out } = run([...relayed.slice(0, 2), ...closing]);
    expect(types(out)).toEqual(['delta', 'reset', 'delta', 'done']);
    expect(visibleText(out)).toBe('Data rotates.');
  });

  it('§9.6: a relay that lost the stream (Redis without persistence): the answer and `done`, with no reset', () => {
    const { out } = run(closingEvents([], { text: 'Data rotates.', usage }, 3));
    expect(types(out)).toEqual(['delta', 'done']);
    expect(visibleText(out)).toBe('Data rotates.');
  });

  it('§9.5: a stream that already ended gets nothing more', () => {
    expect(
      closingEvents([...relayed, { type: 'done', attempt: 1, usage }], { text: 'Data rotates.', usage }, 2),
    ).toEqual([]);
  });
});
