// Encryption at rest (SPEC §17), read as an operator with storage access would: one traced agent
// execution (streamed with an Idempotency-Key, then as plain text) and one gateway execution with
// an EXECUTE reference, every content word a marker; then every row of every table, every Redis
// key of the run's prefix (each type read whole) and the in-process stores, all as readable text.
import { LRUCache } from 'lru-cache';
import { RESP_TYPES } from 'redis';
import type { RedisClient } from '../../infra/redis-client';
import type { Runtime } from '../../runtime';
import type { FakeModelServer } from '../fakes/fake-model-server';
import { readableText } from './history-text';
import { answerOf, parseNdjson, type Api } from './http';
import { seedPipeline } from './knowledge';

/** Made-up words, so that any occurrence in storage is this content and nothing else. */
export const MARKERS = {
  question: 'quixotrel',
  document: 'zephyrmorn',
  answer: 'plumbatix',
  gatewayPrompt: 'grimwalder',
  cachedAnswer: 'vorticelle',
} as const;

export const QUESTION = `How does the ${MARKERS.question} valve open?`;
export const DOCUMENT = `The valve opens with the ${MARKERS.document} lever.\nLunch is served at noon.`;
export const ANSWER = `Pull the ${MARKERS.answer} handle twice.`;
const CACHED_ANSWER = `Three ${MARKERS.cachedAnswer} risks.`;
const GATEWAY_PROMPT = `Summarise ${MARKERS.gatewayPrompt} for {{prompt:risk_digest}}`;

export interface ContentRun {
  executionIds: string[];
  traceId: string;
  pipelineId: string;
}

/** Runs the executions whose content must not be stored readable; checks they really carried it. */
export async function runContent(api: Api, fake: FakeModelServer, name: string): Promise<ContentRun> {
  const { pipelineId } = await seedPipeline(api, { name, documents: [DOCUMENT] });
  const llm = await api.post('/llms', { name: `${name}-llm`, endpoint: fake.url, model: 'm', api_key: 'k' });
  const routed = await api.post('/llms', {
    name: `${name}-routed`,
    endpoint: fake.url,
    model: 'r',
    api_key: 'k',
  });
  const agent = await api.post('/agents', {
    name: `${name}-agent`,
    prompt: [
      { role: 'system', template: 'Answer from the reference.' },
      { role: 'user', template: 'Reference:\n{context}\n\nQuestion: {question}' },
    ],
    placeholders: [
      { name: 'question', type: 'query' },
      { name: 'context', type: 'similarity', target: 'question', params: { k: 2 } },
    ],
  });
  expect(agent.status).toBe(201);
  fake.script('m', { text: ANSWER });
  fake.script('r', { text: CACHED_ANSWER });
  const headers = { 'x-pipeline-id': pipelineId, 'x-llm-id': llm.body.id as string };
  const body = { prompt: { question: QUESTION }, classification: 'public', tracing: true };
  const streamed = await api.post(`/agents/${agent.body.id}/execute`, body, {
    ...headers,
    'Idempotency-Key': `${name}-once`,
  });
  expect(streamed.status).toBe(200);
  expect(answerOf(parseNdjson(streamed.text))).toBe(ANSWER);
  const plain = await api.post(`/agents/${agent.body.id}/execute`, { ...body, stream: false }, headers);
  expect(plain.status).toBe(200);
  expect(plain.text).toBe(ANSWER);
  const traceId = plain.headers.get('x-foundation4ai-tracing-id')!;
  // Through the API the content is there: the storage below holds it, only not readable.
  const trace = await api.get(`/tracing/${traceId}`);
  expect(JSON.stringify(trace.body)).toContain(MARKERS.question);
  expect(JSON.stringify(trace.body)).toContain(MARKERS.document);
  // An EXECUTE reference (the prompt names its own LLM): its answer goes to the EXECUTE cache.
  const saved = await api.post('/api/v1/prompts', {
    promptId: 'risk_digest',
    name: 'Risk digest',
    userPrompt: 'List the top risks.',
    customGatewayId: routed.body.id,
  });
  expect(saved.status).toBe(201);
  const gateway = await api.post(
    '/api/gateway/execute',
    { prompt: GATEWAY_PROMPT },
    { 'x-llm-id': llm.body.id },
  );
  expect(gateway.status).toBe(200);
  expect(gateway.body.executionChain[0]).toMatchObject({ response: CACHED_ANSWER, cached: false });
  const executionIds = [streamed, plain].map((r) => r.headers.get('x-agentry-execution-id')!);
  return { executionIds, traceId, pipelineId };
}

/** The markers found (case-insensitively) in a stored value read as text, bytes and base64. */
export function markersIn(value: unknown): string[] {
  const text = readableText(value).toLowerCase();
  return Object.values(MARKERS).filter((marker) => text.includes(marker));
}

/** Every row of every table of the public schema, keyed `table.column`, values as read. */
export async function tableColumns(rt: Runtime): Promise<Map<string, unknown[]>> {
  const tables = await rt.db.raw<{ rows: { table_name: string }[] }>(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
  );
  const columns = new Map<string, unknown[]>();
  for (const { table_name: table } of tables.rows) {
    const { rows } = await rt.db.raw<{ rows: Record<string, unknown>[] }>(`SELECT * FROM "${table}"`);
    for (const row of rows)
      for (const [column, value] of Object.entries(row)) {
        const key = `${table}.${column}`;
        columns.set(key, [...(columns.get(key) ?? []), value]);
      }
  }
  return columns;
}

/** `table.column: markers` of every column holding content readable (the tsvectors included). */
export const readableColumns = (columns: Map<string, unknown[]>): string[] =>
  [...columns]
    .filter(([, values]) => markersIn(values).length > 0)
    .map(([column, values]) => `${column}: ${markersIn(values).join(', ')}`);

/**
 * The stored fragments' lexemes are keyed hashes, yet a search finds the document by its marker
 * (SR-1 full_text over keyed lexemes, issue 29 item 8).
 */
export async function expectKeyedLexemes(api: Api, columns: Map<string, unknown[]>, pipelineId: string) {
  // Every entry of every vector is a 12-character hash with its positions, none a word.
  const entries = (columns.get('fragments.tsv') as string[]).flatMap((tsv) => tsv.split(' '));
  expect(entries.length).toBeGreaterThan(4);
  expect(entries.filter((e) => !/^'[\w-]{12}':\d+(,\d+)*$/.test(e))).toEqual([]);
  const res = await api.post(`/pipelines/${pipelineId}/search`, {
    query: `"${MARKERS.document} lever"`,
    classification: 'public',
    search_type: 'full_text',
  });
  expect(res.status).toBe(200);
  expect(res.body.data).toHaveLength(1);
  expect(res.body.data[0].page_content).toContain(MARKERS.document);
  expect(res.body.data[0].score).toBeGreaterThan(0);
}

/** Every key under `prefix` with its whole value, read as bytes by type (stream, string, hash, …). */
export async function redisValues(redis: RedisClient, prefix: string): Promise<Map<string, unknown>> {
  const binary = redis.withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });
  const values = new Map<string, unknown>();
  for await (const keys of redis.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 }))
    for (const key of keys) {
      const type = await redis.type(key);
      const read: Record<string, () => Promise<unknown>> = {
        stream: () => binary.xRange(key, '-', '+'),
        string: () => binary.get(key),
        hash: () => binary.hGetAll(key),
        list: () => binary.lRange(key, 0, -1),
        set: () => binary.sMembers(key),
        zset: () => binary.zRange(key, 0, -1),
      };
      if (!read[type]) throw new Error(`unexpected Redis type ${type} of ${key}`);
      values.set(key.slice(prefix.length), await read[type]());
    }
  return values;
}

/**
 * Everything an in-process store holds: its fields and, through iteration, the entries of its
 * maps and caches (lru-cache keeps entries in #private fields, reachable only by iterating).
 */
export function heldValues(store: object): unknown[] {
  const seen = new Set<object>();
  const out: unknown[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string' || v instanceof Uint8Array) out.push(v);
    if (v === null || typeof v !== 'object' || v instanceof Uint8Array || seen.has(v)) return;
    seen.add(v);
    if (v instanceof Map || v instanceof Set || v instanceof LRUCache || Array.isArray(v))
      for (const item of v as Iterable<unknown>) walk(item);
    for (const item of Object.values(v)) walk(item);
  };
  walk(store);
  return out;
}
