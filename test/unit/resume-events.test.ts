// Issue 27: a retry of a resumable LLM continues the relayed text (`resume`), and finds where to
// resume from the relay log and its heartbeat details (activities/model-resume.ts).
import { resumptionFrom } from '../../activities/model-resume';
import { EventSequencer, type ClientEvent, type RelayEvent } from '../../domain/stream-events';

const usage = { input_tokens: 3, output_tokens: 5 };

const clientEvents = (log: RelayEvent[]): ClientEvent[] => {
  const sequencer = new EventSequencer();
  return log.flatMap((event) => sequencer.accept(event));
};

const attempt1: RelayEvent[] = [
  { type: 'start', attempt: 1, response: 'resp_a' },
  { type: 'delta', attempt: 1, text: 'Hello', n: 1, through: 4 },
  { type: 'delta', attempt: 1, text: ' wor', n: 2, through: 6 },
];

describe('resume: one continuous text', () => {
  it('a resume of the text the reader has continues at the next seq, with no reset', () => {
    const out = clientEvents([
      ...attempt1,
      { type: 'resume', attempt: 2, text: 'Hello wor', response: 'resp_a', through: 6 },
      { type: 'delta', attempt: 2, text: 'ld', n: 1, through: 7 },
      { type: 'done', attempt: 2, usage },
    ]);
    expect(out).toEqual([
      { type: 'delta', seq: 1, attempt: 1, text: 'Hello' },
      { type: 'delta', seq: 2, attempt: 1, text: ' wor' },
      { type: 'delta', seq: 3, attempt: 2, text: 'ld' },
      { type: 'done', seq: 4, attempt: 2, usage },
    ]);
  });

  it('a reader whose text differs (its log lost a part) gets a reset and the whole text: it ends with the same answer', () => {
    const out = clientEvents([
      attempt1[0]!,
      attempt1[1]!,
      { type: 'resume', attempt: 2, text: 'Hello wor', response: 'resp_a', through: 6 },
      { type: 'delta', attempt: 2, text: 'ld', n: 1, through: 7 },
    ]);
    expect(out).toEqual([
      { type: 'delta', seq: 1, attempt: 1, text: 'Hello' },
      { type: 'reset', seq: 2, attempt: 2 },
      { type: 'delta', seq: 3, attempt: 2, text: 'Hello wor' },
      { type: 'delta', seq: 4, attempt: 2, text: 'ld' },
    ]);
  });

  it("a dead attempt's late delta after the resume is dropped (a zombie cannot interleave)", () => {
    const out = clientEvents([
      ...attempt1,
      { type: 'resume', attempt: 2, text: 'Hello wor', response: 'resp_a', through: 6 },
      { type: 'delta', attempt: 1, text: 'ld', n: 3, through: 7 },
    ]);
    expect(out.map((e) => e.type)).toEqual(['delta', 'delta']);
  });

  it('a later attempt that starts over after a resume still resets', () => {
    const out = clientEvents([
      ...attempt1,
      { type: 'resume', attempt: 2, text: 'Hello wor', response: 'resp_a', through: 6 },
      { type: 'start', attempt: 3, response: 'resp_b' },
    ]);
    expect(out[out.length - 1]).toEqual({ type: 'reset', seq: 3, attempt: 3 });
  });
});

describe('resumptionFrom', () => {
  it('resumes the response the relayed text comes from, after its last relayed event, with that text', () => {
    expect(resumptionFrom(attempt1, { responseId: 'resp_a' })).toEqual({
      responseId: 'resp_a',
      after: 6,
      text: 'Hello wor',
    });
  });

  it('the log is newer than the heartbeat: a fallback response the heartbeat never carried is the one resumed', () => {
    const log: RelayEvent[] = [
      ...attempt1,
      { type: 'start', attempt: 2, response: 'resp_b' },
      { type: 'delta', attempt: 2, text: 'Hi', n: 1, through: 4 },
    ];
    expect(resumptionFrom(log, { responseId: 'resp_a' })).toEqual({
      responseId: 'resp_b',
      after: 4,
      text: 'Hi',
    });
  });

  it("a started response with nothing relayed resumes from its start; a log without one uses the heartbeat's, from the start", () => {
    expect(resumptionFrom([attempt1[0]!], undefined)).toEqual({ responseId: 'resp_a', text: '' });
    expect(resumptionFrom([], { responseId: 'resp_c' })).toEqual({ responseId: 'resp_c', text: '' });
    expect(resumptionFrom([{ type: 'start', attempt: 1 }], undefined)).toBeUndefined();
  });
});
