// The statements an agent execution sends to PostgreSQL (issue 26): at most 8 for an agent with
// one query and one similarity placeholder (no trace, no references), and one more per extra
// retrieval placeholder. API and worker share one knex here, so every statement of the request,
// the workflow's steps and the model call is counted, from the request to the record's outcome.
import type { Knex } from 'knex';
import { Client as PgClient } from 'pg';
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import { answerOf, parseNdjson } from '../helpers/http';
import { seedPipeline } from '../helpers/knowledge';
import { startStack, type Stack } from '../helpers/stack';
import { until } from '../helpers/wait';

let stack: Stack;
let fake: FakeModelServer;
let pipelineId: string;
let llmId: string;

beforeAll(async () => {
  fake = await startFakeModelServer();
  stack = await startStack();
  ({ pipelineId } = await seedPipeline(stack.api, {
    name: 'kb',
    documents: ['The vault rotates credentials.\nThe cafeteria opens at eight.'],
  }));
  llmId = (await stack.api.post('/llms', { name: 'fake', endpoint: fake.url, model: 'm', api_key: 'sk-x' }))
    .body.id;
  fake.script('m', { text: 'Eight o clock' });
});

afterAll(async () => {
  await stack?.stop();
  await fake?.close();
});

/** The statements `run` sends, with their SQL (for the failure message). */
async function statementsOf(db: Knex, run: () => Promise<void>): Promise<string[]> {
  const sent: string[] = [];
  const count = (query: { sql: string }): void => void sent.push(query.sql);
  db.on('query', count);
  try {
    await run();
  } finally {
    db.off('query', count);
  }
  return sent;
}

async function agentWith(retrievals: number): Promise<string> {
  const names = Array.from({ length: retrievals }, (_, i) => `context${i}`);
  const res = await stack.api.post('/agents', {
    name: `budget-${retrievals}`,
    prompt: [
      { role: 'system', template: 'Answer from the context.' },
      { role: 'user', template: `${names.map((n) => `{${n}}`).join('\n')}\nQuestion: {question}` },
    ],
    placeholders: [
      { name: 'question', type: 'query' },
      ...names.map((name) => ({ name, type: 'similarity', target: 'question', params: { k: 2 } })),
    ],
  });
  expect(res.status).toBe(201);
  return res.body.id;
}

/** One execution from the request to its finished record. */
async function execute(agentId: string, question: string): Promise<void> {
  const res = await stack.api.post(
    `/agents/${agentId}/execute`,
    { prompt: { question }, classification: 'public' },
    { 'x-pipeline-id': pipelineId, 'x-llm-id': llmId },
  );
  expect(res.status).toBe(200);
  expect(answerOf(parseNdjson(res.text))).toBe('Eight o clock');
  const id = res.headers.get('x-agentry-execution-id')!;
  // Read outside the stack's knex, so that waiting adds nothing to the count.
  const db = new PgClient({ connectionString: stack.database.url });
  await db.connect();
  try {
    await until(
      async () =>
        (await db.query('SELECT 1 FROM executions WHERE id = $1 AND finished_at IS NOT NULL', [id]))
          .rowCount || undefined,
      { what: 'the finished record', intervalMs: 5 },
    );
  } finally {
    await db.end();
  }
}

it.each([
  [1, 8],
  [3, 10],
])(
  'an agent execution with a query and %i similarity placeholder(s) sends at most %i statements (API, workflow steps, model call, record)',
  async (retrievals, budget) => {
    const agentId = await agentWith(retrievals);
    // The first one fills the process's copies (agent, pipeline, LLM, model, agent version).
    await execute(agentId, 'When does the cafeteria open?');
    const sent = await statementsOf(stack.rt.db, () => execute(agentId, 'When does the vault rotate?'));
    // Past the budget, the statements over it are shown.
    expect(sent.slice(budget)).toEqual([]);
    expect(sent.length).toBeGreaterThan(0);
  },
);

/** A plain /v1/responses create (issue 34), answered whole, and its finished record. */
async function respond(body: Record<string, unknown>): Promise<string> {
  const res = await stack.api.post('/v1/responses', { model: llmId, ...body });
  expect(res.status).toBe(200);
  expect(res.body.output_text).toBe('Eight o clock');
  const db = new PgClient({ connectionString: stack.database.url });
  await db.connect();
  try {
    await until(
      async () =>
        (await db.query('SELECT 1 FROM executions WHERE id = $1 AND finished_at IS NOT NULL', [res.body.id]))
          .rowCount || undefined,
      { what: 'the finished record', intervalMs: 5 },
    );
  } finally {
    await db.end();
  }
  return res.body.id as string;
}

// The key, the record and request, the activity's request read, the answer, the outcome, and the
// answer read back for the whole answer: a direct query's statements, nothing for the protocol.
it('a plain /v1/responses create answered whole sends at most 6 statements, and previous_response_id one read more', async () => {
  const first = await respond({ input: 'When does the cafeteria open?' });
  const plain = await statementsOf(stack.rt.db, () =>
    respond({ input: 'When does the vault rotate?' }).then(() => undefined),
  );
  expect(plain.slice(6)).toEqual([]);
  const continued = await statementsOf(stack.rt.db, async () => {
    await respond({ input: 'And on Sundays?', previous_response_id: first });
  });
  // The LLM's 1 s lookup cache may lapse between the two on a busy machine: its refill is no
  // statement of the conversation.
  const noRefill = (statements: string[]) => statements.filter((s) => !/from "llms"/i.test(s));
  expect(noRefill(continued)).toHaveLength(noRefill(plain).length + 1);
});
