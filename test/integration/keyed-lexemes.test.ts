// Issue 29 item 8 beyond a fresh ingestion: fragments stored before their lexemes were keyed are
// keyed by the start-up re-index (migration 008's queue), and after a secret rotation the
// fragments keyed under the previous secret are still found, with the same rank.
import { DocumentStore } from '../../db/document-store';
import { FragmentStore, type SearchScope } from '../../db/fragment-store';
import { reindexLexemes } from '../../db/lexeme-reindex';
import { KeyRing } from '../../infra/crypto';
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
