// Issue 15 (search latency): POST /pipelines/{id}/search reads the pipeline and its embedding
// model from copies (infra/lookup-cache.ts), so a repeated search sends PostgreSQL two statements,
// the API key's credentials and the vector search. A change through the API is honoured by the
// very next search: the stack's copies live 60 s here, so these tests fail if an invalidation is
// lost instead of passing once a short TTL ran out.
import { seedPipeline } from '../helpers/knowledge';
import { startStack, type Stack } from '../helpers/stack';

let stack: Stack;
let pipelineId: string;

const HIERARCHY = [{ name: 'internal', includes: ['public'] }, { name: 'public' }];
const search = (api = stack.api) =>
  api.post(`/pipelines/${pipelineId}/search`, { query: 'harbour lighthouse', classification: 'internal' });

/** The statements the in-process API sends while `fn` runs. */
async function statementsDuring(fn: () => Promise<unknown>): Promise<string[]> {
  const statements: string[] = [];
  const listener = (q: { sql: string }): void => void statements.push(q.sql);
  stack.rt.db.on('query', listener);
  try {
    await fn();
  } finally {
    stack.rt.db.removeListener('query', listener);
  }
  return statements;
}

beforeAll(async () => {
  stack = await startStack({ env: { AGENTRY_LOOKUP_CACHE_MS: '60000' } });
  ({ pipelineId } = await seedPipeline(stack.api, {
    name: 'lookups',
    classifications: HIERARCHY,
    documents: ['The harbour lighthouse is public.'],
  }));
});

afterAll(async () => {
  await stack?.stop();
});

describe('issue 15: the search path reads the pipeline and its model from copies', () => {
  it('a repeated search sends two statements: the key credentials and the vector search (CL-3 in it)', async () => {
    expect((await search()).status).toBe(200);
    let res: Awaited<ReturnType<typeof search>> | undefined;
    const statements = await statementsDuring(async () => (res = await search()));
    expect(res!.status).toBe(200);
    expect(res!.body.data).toHaveLength(1);
    expect(statements).toHaveLength(2);
    expect(statements[0]).toMatch(/from "api_keys"/);
    expect(statements[1]).toMatch(/<=>/);
    expect(statements[1]).toMatch(/"f"\."classification" in \(/);
  });

  it('CL-2: a classification change through PATCH /pipelines is honoured by the next search', async () => {
    expect((await search()).body.data).toHaveLength(1);
    const patched = await stack.api.patch(`/pipelines/${pipelineId}`, {
      classifications: [{ name: 'internal' }, { name: 'public' }],
    });
    expect(patched.status).toBe(200);
    // `internal` no longer includes `public`: the public fragment is out of the reader's reach.
    expect((await search()).body.data).toHaveLength(0);
    await stack.api.patch(`/pipelines/${pipelineId}`, { classifications: HIERARCHY });
    expect((await search()).body.data).toHaveLength(1);
  });

  it('AUTH-2/AUTH-3: a revoked grant or a deleted key is honoured by the next search', async () => {
    const key = await stack.api.post('/api_keys', {
      name: 'lookups-reader',
      permissions: [`read:pipelines:${pipelineId}`, `execute:pipelines:${pipelineId}`],
    });
    expect(key.status).toBe(201);
    const reader = stack.api.as({ id: key.body.id, secret: key.body.secret });
    expect((await search(reader)).status).toBe(200);
    const revoked = await stack.api.patch(`/api_keys/${key.body.id}`, {
      permissions: [`read:pipelines:${pipelineId}`],
    });
    expect(revoked.status).toBe(200);
    expect((await search(reader)).status).toBe(403);
    expect((await stack.api.delete(`/api_keys/${key.body.id}`)).status).toBe(204);
    expect((await search(reader)).status).toBe(401);
  });

  it('§4: a deleted pipeline is a 404 for the next search', async () => {
    const other = await stack.api.post('/pipelines', {
      name: 'lookups-deleted',
      embedding_model_id: (await stack.api.get(`/pipelines/${pipelineId}`)).body.embedding_model_id,
      text_splitter_id: (await stack.api.get(`/pipelines/${pipelineId}`)).body.text_splitter_id,
      classifications: HIERARCHY,
    });
    const path = `/pipelines/${other.body.id}/search`;
    expect((await stack.api.post(path, { query: 'x', classification: 'public' })).status).toBe(200);
    expect((await stack.api.delete(`/pipelines/${other.body.id}`)).status).toBe(204);
    expect((await stack.api.post(path, { query: 'x', classification: 'public' })).status).toBe(404);
  });
});
