// An agent of seed 000 on a stack (embedding model, splitter, pipeline with one ready document,
// an LLM on the fake model server), its streamed execution read as it arrives, and the checks
// every complete stream must pass (SPEC §9.5): shared by the reliability suite and the tests that
// run a stack on secured connections.
import type { FakeModelServer } from '../fakes/fake-model-server';
import { answerOf, type Api } from './http';
import { documentSettled } from './knowledge';

const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet'];

/** `count` distinct words ("alpha0 bravo1 ..."): the fake streams one per delta. */
export const scriptedAnswer = (count: number): string =>
  Array.from({ length: count }, (_, i) => `${WORDS[i % WORDS.length]}${i}`).join(' ');

// ---- an agent of seed 000 on a stack ------------------------------------------------------------

export interface SeededAgent {
  agentId: string;
  pipelineId: string;
  llmId: string;
  documentId: string;
}

export interface SeedOptions {
  /** The fake's model name for the LLM (and a suffix of every object name). */
  model: string;
  /** The fake's embedding model for the pipeline; default: the built-in hash embedder. */
  embeddingModel?: string;
  /** Register the LLM in resumable mode (issue 27). */
  resumable?: boolean;
}

/** Embedding model, splitter, pipeline with one ready document, an LLM on the fake, an agent. */
export async function seedAgent(admin: Api, fake: FakeModelServer, opts: SeedOptions): Promise<SeededAgent> {
  const name = `rel-${opts.model}`;
  const model = await admin.post(
    '/embedding_models',
    opts.embeddingModel
      ? {
          name,
          provider: 'openai',
          size: 16,
          parameters: { endpoint: fake.url, model: opts.embeddingModel, api_key: 'sk-embed' },
        }
      : { name, provider: 'hash', size: 64 },
  );
  expect(model.status).toBe(201);
  const splitter = await admin.post('/text_splitters', {
    name,
    provider: 'character',
    parameters: { separator: '\n\n', chunk_size: 1000, chunk_overlap: 0 },
  });
  expect(splitter.status).toBe(201);
  const pipeline = await admin.post('/pipelines', {
    name,
    embedding_model_id: model.body.id,
    text_splitter_id: splitter.body.id,
    classifications: [{ name: 'internal' }],
  });
  expect(pipeline.status).toBe(201);
  const doc = await admin.post(`/pipelines/${pipeline.body.id}/documents`, {
    content: 'Database credentials rotate every 30 days.',
    classification: 'internal',
  });
  expect(doc.status).toBe(202);
  expect(await documentSettled(admin, pipeline.body.id, doc.body.id)).toMatchObject({ status: 'ready' });
  const llm = await admin.post('/llms', {
    name,
    endpoint: fake.url,
    model: opts.model,
    api_key: 'sk-x',
    ...(opts.resumable ? { resumable: true } : {}),
  });
  expect(llm.status).toBe(201);
  const agent = await admin.post('/agents', {
    name,
    prompt: [
      { role: 'system', template: 'Answer using only the reference text.' },
      { role: 'user', template: 'Reference text:\n{context}\n\nQuestion: {question}' },
    ],
    placeholders: [
      { name: 'question', type: 'query' },
      { name: 'context', type: 'similarity', target: 'question' },
    ],
  });
  expect(agent.status).toBe(201);
  return {
    agentId: agent.body.id,
    pipelineId: pipeline.body.id,
    llmId: llm.body.id,
    documentId: doc.body.id,
  };
}

// ---- streams ------------------------------------------------------------------------------------

export interface LiveStream {
  status: number;
  executionId: string;
  /** Events received so far; grows while the response is open. */
  events: any[];
  /** When each event arrived (epoch ms), index for index with `events`. */
  arrivals: number[];
  /** Resolves when the response ended (rejects if the connection broke). */
  ended: Promise<void>;
}

/** Reads an NDJSON response as it arrives. */
export function readNdjson(res: Response): Pick<LiveStream, 'events' | 'arrivals' | 'ended'> {
  const events: any[] = [];
  const arrivals: number[] = [];
  const push = (line: string): void => {
    events.push(JSON.parse(line));
    arrivals.push(Date.now());
  };
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  const ended = (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffered += decoder.decode(value, { stream: true });
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) if (line.trim() !== '') push(line);
    }
    if (buffered.trim() !== '') push(buffered);
  })();
  ended.catch(() => undefined); // a test that breaks the connection awaits it itself
  return { events, arrivals, ended };
}

/**
 * POST /agents/{id}/execute (NDJSON), returning as soon as the status is decided; `body` is the
 * text of a response that is not 200, `headers` the response's.
 */
export async function executeAgent(
  admin: Api,
  agent: SeededAgent,
  headers: Record<string, string> = {},
  question = 'How do I rotate the credentials?',
): Promise<LiveStream & { body: string; headers: Headers }> {
  const res = await fetch(`${admin.baseUrl}/agents/${agent.agentId}/execute`, {
    method: 'POST',
    headers: admin.headers({
      'content-type': 'application/json',
      'x-pipeline-id': agent.pipelineId,
      'x-llm-id': agent.llmId,
      ...headers,
    }),
    body: JSON.stringify({
      prompt: { question },
      classification: 'internal',
    }),
  });
  const executionId = res.headers.get('x-agentry-execution-id') ?? '';
  if (res.status !== 200) {
    const body = await res.text();
    const ended = Promise.resolve();
    return { status: res.status, executionId, events: [], arrivals: [], ended, body, headers: res.headers };
  }
  return { status: res.status, executionId, ...readNdjson(res), body: '', headers: res.headers };
}

export const deltaCount = (events: any[]): number => events.filter((e) => e.type === 'delta').length;

/**
 * What every complete stream shows: `seq` runs 1..n; exactly one terminal event, last, and it is
 * `done` (of `attempt` when given); a client's reconstruction is exactly `answer`. Returns `done`.
 */
function expectOneAnswer(events: any[], answer: string, attempt: number | undefined): any {
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  expect(events.filter((e) => e.type === 'done' || e.type === 'error')).toHaveLength(1);
  const done = events[events.length - 1];
  expect(done).toMatchObject({ type: 'done', ...(attempt !== undefined ? { attempt } : {}) });
  expect(answerOf(events)).toBe(answer);
  return done;
}

/**
 * SPEC §9.5 on one complete stream, and the suite's central promise: no lost and no duplicated
 * output. `seq` runs 1..n; exactly one terminal event, last, and it is `done`; attempts never go
 * down; a `reset` only follows text of a lower attempt; the deltas after the last reset are all of
 * the final attempt and concatenate to exactly `answer` (and so does a client's reconstruction).
 */
export function expectCleanAnswer(events: any[], answer: string, attempt?: number): void {
  const done = expectOneAnswer(events, answer, attempt);
  const attempts = events.map((e) => e.attempt as number);
  expect(attempts).toEqual([...attempts].sort((a, b) => a - b));
  events.forEach((e, i) => {
    if (e.type !== 'reset') return;
    expect(events[i - 1]).toMatchObject({ type: 'delta' });
    expect(events[i - 1].attempt).toBeLessThan(e.attempt);
  });
  const lastReset = events.map((e) => e.type).lastIndexOf('reset');
  const final = events.slice(lastReset + 1, -1);
  expect(final.every((e) => e.type === 'delta' && e.attempt === done.attempt)).toBe(true);
  expect(final.map((e) => e.text).join('')).toBe(answer);
}

/**
 * A resumable LLM's answer (issue 27): one continuous text whatever attempts gave it: what every
 * stream shows (`expectOneAnswer`), no `reset`, and all its deltas are the answer.
 */
export function expectContinuousAnswer(events: any[], answer: string, attempt?: number): void {
  expectOneAnswer(events, answer, attempt);
  expect(resets(events)).toHaveLength(0);
  expect(
    events
      .filter((e) => e.type === 'delta')
      .map((e) => e.text)
      .join(''),
  ).toBe(answer);
}

export const resets = (events: any[]): any[] => events.filter((e) => e.type === 'reset');
