// SPEC §17 on the real services: after traced executions and an EXECUTE reference, no question,
// fragment or answer text is readable in any Redis key of the run (relay streams, trace, EXECUTE
// cache, idempotency keys, counters) nor in any PostgreSQL row (execution payloads, document
// versions, fragments, records, every other table), the fragments' tsvectors included: their
// lexemes are keyed hashes (SR-1; docs/decisions.md, "No words at rest").
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import {
  MARKERS,
  expectKeyedLexemes,
  heldValues,
  markersIn,
  readableColumns,
  redisValues,
  runContent,
  tableColumns,
  type ContentRun,
} from '../helpers/at-rest';
import { startStack, type Stack } from '../helpers/stack';

let stack: Stack;
let fake: FakeModelServer;
let run: ContentRun;

beforeAll(async () => {
  fake = await startFakeModelServer();
  stack = await startStack();
  run = await runContent(stack.api, fake, 'at-rest');
});

afterAll(async () => {
  await stack?.stop();
  await fake?.close();
});

describe('§17 encryption at rest: Redis and PostgreSQL', () => {
  it('the readers see plaintext where there is some (planted values)', () => {
    expect(markersIn({ planted: Buffer.from(`x ${MARKERS.answer} y`) })).toEqual([MARKERS.answer]);
    expect(markersIn(Buffer.from(`"${MARKERS.question}"`).toString('base64'))).toEqual([MARKERS.question]);
    expect(markersIn(heldValues(new Map([['k', { v: Buffer.from(MARKERS.document) }]])))).toEqual([
      MARKERS.document,
    ]);
  });

  it('no Redis key of the run holds content readable: relay streams, trace, EXECUTE cache, idempotency', async () => {
    const values = await redisValues(stack.rt.redis!, stack.env.config.redisPrefix);
    const keys = [...values.keys()];
    for (const id of run.executionIds) expect(keys).toContain(`exec:${id}:events`);
    expect(keys).toContain(`trace:${run.traceId}`);
    expect(keys.some((k) => k.startsWith('prompt:execute:risk_digest:'))).toBe(true);
    expect(keys.some((k) => k.startsWith('idempotency:'))).toBe(true);
    // The relay holds every event of both executions (start, deltas, done): several entries each.
    expect((values.get(`exec:${run.executionIds[0]}:events`) as unknown[]).length).toBeGreaterThan(3);
    const readable = keys.filter((key) => markersIn(values.get(key)).length > 0);
    expect(readable).toEqual([]);
    // Decrypted with its key, the trace is the content: the scan read the real value.
    const trace = stack.rt.keyring.decrypt(
      'trace',
      Buffer.from(String(values.get(`trace:${run.traceId}`)), 'base64'),
    );
    expect(markersIn(trace.toString('utf8'))).toEqual([MARKERS.question, MARKERS.document]);
  });

  it('no PostgreSQL row holds content readable, the fragments’ lexemes included (SR-1 keyed)', async () => {
    const columns = await tableColumns(stack.rt);
    // The content is there, encrypted: payloads of both executions and the gateway's, the document,
    // its fragments.
    expect(columns.get('execution_payloads.cipher')!.length).toBeGreaterThanOrEqual(3);
    expect(columns.get('document_versions.content_cipher')!.every((v) => Buffer.isBuffer(v))).toBe(true);
    expect(columns.get('fragments.text_cipher')!.length).toBe(2);
    expect(readableColumns(columns)).toEqual([]);
    await expectKeyedLexemes(stack.api, columns, run.pipelineId);
  });
});
