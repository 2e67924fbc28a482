// Issue 29 item 8 beyond a fresh ingestion: fragments stored before their lexemes were keyed are
// keyed by the start-up re-index (migration 008's queue), and after a secret rotation the
// fragments keyed under the previous secret are still found, with the same rank. Issue 33: a
// fragment whose text cannot be decrypted does not stall the re-index, and a failing statement
// over fragment texts reaches the log by its code and statement, never with the texts.
import { Writable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { DocumentStore } from '../../db/document-store';
import { FragmentStore, type SearchScope } from '../../db/fragment-store';
import { reindexLexemes } from '../../db/lexeme-reindex';
import { KeyRing } from '../../infra/crypto';
import { createLogger } from '../../infra/logger';
import { createRuntime } from '../../runtime';
import { TEST_APPLICATION_SECRET } from '../helpers/config';
import { seedPipeline } from '../helpers/knowledge';
import { startStack, type Stack } from '../helpers/stack';

let stack: Stack;
let scope: SearchScope;
let config: string;
const DOCUMENT = 'The boiler hums at night.\nThe night porter checks the boiler.\nBreakfast is at seven.';

const tsvs = async () =>
  (
    await stack.rt
      .db('fragments')
      .where({ pipeline_id: scope.pipelineId })
      .orderBy('ordinal')
      .select('id', 'tsv')
  ).map((r) => `${r.id} ${r.tsv}`);

const search = (store: FragmentStore, query: string) =>
  store.fullText(scope, config, query, 5).then((hits) => hits.map((h) => ({ id: h.id, rank: h.rank })));

beforeAll(async () => {
  stack = await startStack();
  const seeded = await seedPipeline(stack.api, { name: 'keyed', documents: [DOCUMENT] });
  scope = {
    pipelineId: seeded.pipelineId,
    embeddingModelId: seeded.embeddingModelId,
    size: 64,
    classifications: ['public'],
    filter: null,
  };
  ({ text_search_config: config } = await stack.rt
    .db('pipelines')
    .where({ id: seeded.pipelineId })
    .first('text_search_config'));
});

afterAll(async () => {
  await stack?.stop();
});

describe('keyed lexemes: re-index and rotation (issue 29 item 8)', () => {
  it('fragments with plain lexemes (before migration 008) are keyed by the re-index and found again', async () => {
    const keyed = await tsvs();
    const found = await search(stack.rt.fragments, 'boiler');
    expect(found).toHaveLength(2);
    // As a database from before the change holds them: the words, and the migration's queue.
    const rows = await stack.rt
      .db('fragments')
      .where({ pipeline_id: scope.pipelineId })
      .select('id', 'text_cipher');
    expect(rows.length).toBeGreaterThan(1);
    for (const r of rows) {
      const text = stack.rt.keyring.decrypt('content', r.text_cipher as Buffer).toString('utf8');
      await stack.rt.db.raw('UPDATE fragments SET tsv = to_tsvector(?::regconfig, ?) WHERE id = ?', [
        config,
        text,
        r.id,
      ]);
      await stack.rt.db('lexeme_reindex').insert({ fragment_id: r.id });
    }
    expect((await tsvs()).join(' ')).toContain("'boiler'");
    expect(await search(stack.rt.fragments, 'boiler')).toEqual([]);
    const { keyring, documents } = stack.rt;
    expect(await reindexLexemes(stack.rt.db, keyring, documents.lexemes, undefined, 1)).toBe(rows.length);
    expect(await tsvs()).toEqual(keyed);
    expect(await search(stack.rt.fragments, 'boiler')).toEqual(found);
    expect(await stack.rt.db('lexeme_reindex').count('* as n').first()).toEqual({ n: 0 });
  });

  it('after a rotation, fragments keyed under the previous secret are found with the same rank', async () => {
    const before = await search(stack.rt.fragments, '"night porter" | boiler');
    expect(before.length).toBeGreaterThan(0);
    const rotated = new KeyRing('a-new-application-secret-after-rotation', TEST_APPLICATION_SECRET);
    const store = new FragmentStore(stack.rt.db, new DocumentStore(stack.rt.db, rotated), 40);
    expect(await search(store, '"night porter" | boiler')).toEqual(before);
    // Without the previous secret, the fragments are not found: the query is keyed, not the words.
    const unrelated = new FragmentStore(
      stack.rt.db,
      new DocumentStore(stack.rt.db, new KeyRing('another')),
      40,
    );
    expect(await search(unrelated, 'boiler')).toEqual([]);
  });
});

describe('the start-up re-index meets a fragment it cannot use (issue 33)', () => {
  // Each line longer than half the splitter's chunk: one fragment each.
  const LINES = [
    'Lighthouse keepers log the weather every hour.',
    'The lamp turns all night above the harbour.',
    'Gulls nest on the rocks below the tower.',
  ];
  let fragments: { id: string; text_cipher: Buffer; tsv: string }[];

  beforeAll(async () => {
    const seeded = await seedPipeline(stack.api, { name: 'unusable', documents: [LINES.join('\n')] });
    fragments = await stack.rt
      .db('fragments')
      .where({ pipeline_id: seeded.pipelineId })
      .orderBy('ordinal')
      .select('id', 'text_cipher', 'tsv');
    expect(fragments).toHaveLength(3);
  });

  afterEach(async () => {
    for (const f of fragments)
      await stack.rt.db('fragments').where({ id: f.id }).update({ text_cipher: f.text_cipher, tsv: f.tsv });
    await stack.rt.db('lexeme_reindex').delete();
  });

  /** Queues a fragment as migration 008 did, with its plain lexemes and the text given. */
  async function queue(id: string, textCipher: Buffer, text: string): Promise<void> {
    await stack.rt.db.raw(
      'UPDATE fragments SET tsv = to_tsvector(?::regconfig, ?), text_cipher = ? WHERE id = ?',
      [config, text, textCipher, id],
    );
    await stack.rt.db('lexeme_reindex').insert({ fragment_id: id });
  }

  /** A process started on this database (its re-index runs and is awaited): its log lines and metrics. */
  async function restart(): Promise<{ lines: Record<string, any>[]; text: string; metrics: string }> {
    const chunks: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        chunks.push(chunk.toString('utf8'));
        done();
      },
    });
    const rt = await createRuntime(stack.env.config, createLogger('info', sink));
    await rt.close();
    const text = chunks.join('');
    return {
      lines: text
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l)),
      text,
      metrics: await rt.metrics.metrics(),
    };
  }

  it('a statement over fragment texts that fails is logged by its SQLSTATE and statement, never with the texts', async () => {
    const marker = `keeper-${randomBytes(6).toString('hex')}`;
    // Too many distinct words for one tsvector: the re-index's to_tsvector over the decrypted
    // texts fails as it runs. With parameters in error reports (an operator debugging the
    // database's log), PostgreSQL quotes them in the error's context, which reaches the client.
    const words = Array.from({ length: 120_000 }, (_, i) => `w${i.toString(36)}q`).join(' ');
    const text = `The ${marker} keeps the lamp. ${words}`;
    const { current_database: database } = (await stack.rt.db.raw('SELECT current_database()')).rows[0];
    await stack.rt.db.raw(`ALTER DATABASE "${database}" SET log_parameter_max_length_on_error = 64`);
    try {
      await queue(fragments[0]!.id, stack.rt.keyring.encrypt('content', text), 'The keeper keeps the lamp.');
      const { lines, text: log } = await restart();
      expect(log).not.toContain(marker);
      expect(log).not.toContain('lamp');
      const failed = lines.find((l) => l.msg?.includes('keying fragment lexemes failed'));
      expect(failed?.err).toMatchObject({ code: '54000', statement: expect.any(String) });
    } finally {
      await stack.rt.db.raw(`ALTER DATABASE "${database}" RESET log_parameter_max_length_on_error`);
    }
  });

  it('a fragment whose text cannot be decrypted is skipped, counted and logged by its id; the batch goes on and the next start finds nothing queued', async () => {
    const [first, lost, last] = fragments as [
      (typeof fragments)[0],
      (typeof fragments)[0],
      (typeof fragments)[0],
    ];
    const foreign = new KeyRing('a-secret-this-deployment-never-had').encrypt('content', LINES[1]!);
    await queue(first.id, first.text_cipher, LINES[0]!);
    await queue(lost.id, foreign, LINES[1]!);
    await queue(last.id, last.text_cipher, LINES[2]!);
    const { lines, text: log, metrics } = await restart();
    const tsvOf = async (id: string) => (await stack.rt.db('fragments').where({ id }).first('tsv')).tsv;
    expect(await tsvOf(first.id)).toBe(first.tsv);
    expect(await tsvOf(last.id)).toBe(last.tsv);
    // Its plain lexemes are dropped (no words at rest); it is found again once re-ingested.
    expect(await tsvOf(lost.id)).toBeNull();
    expect(await stack.rt.db('lexeme_reindex').count('* as n').first()).toEqual({ n: 0 });
    expect(metrics).toMatch(/^agentry_lexeme_reindex_unreadable_total 1$/m);
    // Served by the API's /metrics (and the worker's), beside its own series.
    expect((await stack.api.get('/metrics')).text).toMatch(/^agentry_lexeme_reindex_unreadable_total 0$/m);
    const skipped = lines.filter((l) => l.fragmentId !== undefined);
    expect(skipped).toEqual([
      expect.objectContaining({ level: 40, fragmentId: lost.id, table: 'fragments' }),
    ]);
    expect(log).not.toContain('Gulls');
    expect(log).not.toContain('lamp');

    const again = await restart();
    expect(again.metrics).toMatch(/^agentry_lexeme_reindex_unreadable_total 0$/m);
    expect(again.lines.filter((l) => l.level >= 40)).toEqual([]);
  });
});
