// SPEC §17 in the embedded quick start's mode (PGlite, no Redis): after the same traced executions
// as encryption-at-rest.test.ts, no PGlite row and nothing the in-process relay, trace store and
// EXECUTE cache hold is readable content, the fragments' lexemes included (keyed hashes, SR-1).
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import {
  MARKERS,
  expectKeyedLexemes,
  heldValues,
  markersIn,
  readableColumns,
  runContent,
  tableColumns,
  type ContentRun,
} from '../helpers/at-rest';
import type { TestDatabase } from '../helpers/database';
import { EMBEDDED_ENV, startEmbeddedDatabase } from '../helpers/embedded-database';
import { startStack, type Stack } from '../helpers/stack';

let database: TestDatabase;
let stack: Stack;
let fake: FakeModelServer;
let run: ContentRun;

// PGlite compiles its WebAssembly and migrates on start: slower than a database clone.
beforeAll(async () => {
  fake = await startFakeModelServer();
  database = await startEmbeddedDatabase();
  stack = await startStack({ database, env: EMBEDDED_ENV });
  run = await runContent(stack.api, fake, 'at-rest-embedded');
}, 120_000);

afterAll(async () => {
  await (stack ? stack.stop() : database?.drop());
  await fake?.close();
});

describe('§17 encryption at rest: embedded mode', () => {
  it('runs without Redis, on PGlite', async () => {
    expect(stack.rt.redis).toBeUndefined();
    const { rows } = await stack.rt.db.raw<{ rows: { version: string }[] }>('SELECT version()');
    expect(rows[0]!.version).toMatch(/PostgreSQL/);
    expect(stack.database.name).toBe('pglite');
  });

  it('the in-process relay, trace store and EXECUTE cache hold the content, only encrypted', () => {
    const stores = [
      { store: stack.rt.relay, purpose: 'relay', holds: [MARKERS.answer] },
      { store: stack.rt.traces, purpose: 'trace', holds: [MARKERS.question, MARKERS.document] },
      { store: stack.rt.executeCache, purpose: 'content', holds: [MARKERS.cachedAnswer] },
    ] as const;
    for (const { store, purpose, holds } of stores) {
      const held = heldValues(store);
      expect(markersIn(held)).toEqual([]);
      // Decrypted with the store's key, its entries are the content: the scan read the real entries.
      const opened = held.flatMap((value) => {
        if (!(value instanceof Uint8Array)) return [];
        try {
          return [stack.rt.keyring.decrypt(purpose, Buffer.from(value)).toString('utf8')];
        } catch {
          return [];
        }
      });
      expect(markersIn(opened)).toEqual(expect.arrayContaining([...holds]));
    }
  });

  it('no PGlite row holds content readable, the fragments’ lexemes included; full_text still finds them', async () => {
    const columns = await tableColumns(stack.rt);
    expect(columns.get('execution_payloads.cipher')!.length).toBeGreaterThanOrEqual(3);
    expect(columns.get('fragments.text_cipher')!.length).toBe(2);
    expect(readableColumns(columns)).toEqual([]);
    await expectKeyedLexemes(stack.api, columns, run.pipelineId);
  });
});
