// Seed 000's curl walk-through on real API and worker processes (built dist/): the
// support-answers agent with the seed's exact body, a pipeline holding a document about rotating
// database credentials, an LLM on the fake model server, an execution with the seed's exact body
// and headers, and its trace (seed 004, TR-1..TR-3). Then TR-4/§9.3: the Temporal history, read
// without the payload codec, holds no content in plaintext (nor base64), and the execution record
// names the agent version it ran.
import { Client as TemporalClient, Connection } from '@temporalio/client';
import { Client as PgClient } from 'pg';
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import type { TestEnv } from '../helpers/config';
import { readableText } from '../helpers/history-text';
import type { Api } from '../helpers/http';
import { documentsReady } from '../helpers/knowledge';
import { startProcessStack, type Child, type ProcessStack } from '../helpers/processes';
import { TEMPORAL_ADDRESS } from '../helpers/services';

let stack: ProcessStack;
let env: TestEnv;
let api: Child;
let worker: Child;
let fake: FakeModelServer;
let admin: Api;
let temporal: TemporalClient;

beforeAll(async () => {
  fake = await startFakeModelServer();
  stack = await startProcessStack();
  ({ env, api, worker, admin } = stack);
  // Deliberately without the payload codec: what an operator with Temporal access sees.
  temporal = new TemporalClient({ connection: await Connection.connect({ address: TEMPORAL_ADDRESS }) });
});

afterAll(async () => {
  await stack?.stop();
  await temporal?.connection.close();
  await fake?.close();
});

// The seed's request bodies, verbatim.
const CREATE_AGENT = `{
    "name": "support-answers",
    "description": "Answers support questions from the product knowledge base",
    "prompt": [
      {
        "role": "system",
        "template": "Answer using only the reference text. If the reference text does not contain the answer, say that the answer is not available."
      },
      {
        "role": "user",
        "template": "Reference text:\\n{context}\\n\\nQuestion: {question}"
      }
    ],
    "placeholders": [
      {"name": "question", "type": "query"},
      {"name": "context", "type": "similarity", "target": "question", "params": {"k": 5}}
    ]
  }`;
const EXECUTE = `{
    "prompt": {"question": "How do I rotate the database credentials?"},
    "classification": ["internal"],
    "stream": false,
    "tracing": true,
    "temperature": 0.2
  }`;

const SYSTEM =
  'Answer using only the reference text. If the reference text does not contain the answer, say that the answer is not available.';
const QUESTION = 'How do I rotate the database credentials?';
// Seed 004's fragment text.
const FRAGMENT =
  'Database credentials rotate every 30 days. An administrator starts an early rotation from the Credentials page of the operations console.';
const RESTRICTED = 'Database credentials of the payroll vault rotate on request from the restricted desk.';
const ANSWER = 'Start an early rotation from the Credentials page of the operations console.';
const LLM_KEY = 'sk-seed-000-llm-key-7a1c';
const RENDERED_USER = `Reference text:\n${FRAGMENT}\n\nQuestion: ${QUESTION}`;

describe('seed 000 walk-through on separate API and worker processes', () => {
  let user: Api;
  let agentId: string;
  let pipelineId: string;
  let llmId: string;
  let documentId: string;
  let traceId: string;
  let executionId: string;

  it('seed 000: POST /agents with the seed body → 201 with every include and parameter materialised', async () => {
    const key = await admin.post('/api_keys', {
      name: 'integrator',
      permissions: [
        'write:embedding_models',
        'write:text_splitters',
        'write:pipelines',
        'write:llms',
        'write:agents',
      ],
    });
    expect(key.status).toBe(201);
    user = admin.as({ id: key.body.id, secret: key.body.secret });

    const res = await user.post('/agents', CREATE_AGENT);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/),
      name: 'support-answers',
      description: 'Answers support questions from the product knowledge base',
      prompt: [
        { role: 'system', template: SYSTEM, include: true },
        { role: 'user', template: 'Reference text:\n{context}\n\nQuestion: {question}', include: true },
      ],
      placeholders: [
        { name: 'question', type: 'query' },
        { name: 'context', type: 'similarity', target: 'question', params: { k: 5, threshold: null } },
      ],
      metadata: {},
      tools: [],
      version: 1,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    agentId = res.body.id;
  });

  it('seed 000: a pipeline (hash embedder) holds the credential-rotation document under `internal`; an LLM is registered', async () => {
    const model = await user.post('/embedding_models', { name: 'hash', provider: 'hash', size: 128 });
    expect(model.status).toBe(201);
    const splitter = await user.post('/text_splitters', {
      name: 'paragraphs',
      provider: 'character',
      parameters: { separator: '\n\n', chunk_size: 1000, chunk_overlap: 0 },
    });
    expect(splitter.status).toBe(201);
    const pipeline = await user.post('/pipelines', {
      name: 'product-kb',
      embedding_model_id: model.body.id,
      text_splitter_id: splitter.body.id,
      classifications: [
        { name: 'internal', includes: ['public'] },
        { name: 'public' },
        { name: 'restricted' },
      ],
    });
    expect(pipeline.status).toBe(201);
    pipelineId = pipeline.body.id;

    const docs = [
      { content: FRAGMENT, classification: 'internal', metadata: { title: 'Database credential rotation' } },
      // Close to the question but outside the reader's classifications: never retrieved.
      { content: RESTRICTED, classification: 'restricted', metadata: { title: 'Payroll vault' } },
    ];
    const ids: string[] = [];
    for (const doc of docs) {
      const res = await user.post(`/pipelines/${pipelineId}/documents`, doc);
      expect(res.status).toBe(202);
      ids.push(res.body.id);
    }
    await documentsReady(user, pipelineId, ids);
    documentId = ids[0]!;

    const llm = await user.post('/llms', {
      name: 'gpt',
      endpoint: fake.url,
      model: 'gpt-seed',
      api_key: LLM_KEY,
    });
    expect(llm.status).toBe(201);
    llmId = llm.body.id;
  });

  it('seed 000: execute with the seed body and headers → 200 plain text and x-foundation4ai-tracing-id', async () => {
    fake.script('gpt-seed', { text: ANSWER });
    const res = await user.post(`/agents/${agentId}/execute`, EXECUTE, {
      'x-pipeline-id': pipelineId,
      'x-llm-id': llmId,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(res.text).toBe(ANSWER);
    // TR-4: a random UUIDv4.
    traceId = res.headers.get('x-foundation4ai-tracing-id')!;
    expect(traceId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    executionId = res.headers.get('x-agentry-execution-id')!;
    expect(executionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers.get('x-request-id')).toBeTruthy();

    // LLM-2: the system message became the instructions, the user message the only input item.
    const requests = fake.requestsFor('gpt-seed');
    expect(requests).toHaveLength(1);
    expect(requests[0]!.headers.authorization).toBe(`Bearer ${LLM_KEY}`);
    expect(requests[0]!.body).toMatchObject({
      model: 'gpt-seed',
      instructions: SYSTEM,
      input: [{ role: 'user', content: RENDERED_USER }],
      temperature: 0.2,
      stream: true,
    });
  });

  it('seed 004/TR-1: GET /tracing/{id} → inputs, the fragments with every field, the prompt as sent; never the answer', async () => {
    const res = await user.get(`/tracing/${traceId}`);
    expect(res.status).toBe(200);
    const stored = await user.get(`/pipelines/${pipelineId}/documents/${documentId}/fragments`);
    expect(stored.body.data).toHaveLength(1);
    const document = await user.get(`/pipelines/${pipelineId}/documents/${documentId}`);
    expect(res.body).toEqual({
      traces: {
        context: [
          {
            id: stored.body.data[0].id,
            classification: 'internal',
            metadata: { title: 'Database credential rotation' },
            document_id: documentId,
            page_content: FRAGMENT,
            version: document.body.version,
            expired_at: null,
            score: expect.any(Number),
            order_id: 0,
          },
        ],
      },
      prompt: [
        { role: 'system', template: SYSTEM },
        { role: 'user', template: RENDERED_USER },
      ],
      inputs: { question: QUESTION },
    });
    const fragment = res.body.traces.context[0];
    expect(Object.keys(fragment).sort()).toEqual(
      [
        'classification',
        'document_id',
        'expired_at',
        'id',
        'metadata',
        'order_id',
        'page_content',
        'score',
        'version',
      ].sort(),
    );
    expect(Number.isInteger(fragment.version)).toBe(true);
    expect(fragment.score).toBeGreaterThanOrEqual(0);
    expect(fragment.score).toBeLessThan(1);
    expect(res.text).not.toContain(ANSWER);
    expect(res.text).not.toContain('payroll');
  });

  it('TR-3: another key (an admin too) gets 404 "Trace with id <id> not found"', async () => {
    const other = await admin.post('/api_keys', { name: 'other-app', permissions: ['execute:agents'] });
    const responses = [
      await admin.as({ id: other.body.id, secret: other.body.secret }).get(`/tracing/${traceId}`),
      await admin.get(`/tracing/${traceId}`),
    ];
    for (const res of responses) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ detail: `Trace with id ${traceId} not found` });
    }
  });

  it('TR-4/§9.3: the Temporal history, read without the codec, holds no trace, prompt, fragment or question text, nor its base64', async () => {
    const handle = temporal.workflow.getHandle(`execution-${executionId}`);
    const history = await handle.fetchHistory();
    expect(history.events!.length).toBeGreaterThan(5);
    const scheduled = history
      .events!.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)
      .filter((name): name is string => !!name);
    expect(scheduled).toEqual(['callModel']);
    // Retrieval, rendering, the trace and the record are local activities: markers in the same history.
    const localActivities = history.events!.filter(
      (e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity',
    );
    expect(localActivities.length).toBeGreaterThanOrEqual(4);

    // The detector finds content however a payload would carry it: raw bytes, JSON, base64.
    for (const planted of [
      { data: new Uint8Array(Buffer.from(JSON.stringify({ q: QUESTION }))) },
      {
        data: new Uint8Array(
          Buffer.from(`{"x":"ab${Buffer.from(`{"q":"${QUESTION}"}`).toString('base64')}"}`),
        ),
      },
      { message: `c${Buffer.from(FRAGMENT).toString('base64')}` },
    ]) {
      expect(readableText({ payload: planted })).toMatch(/rotate the database credentials|Credentials page/);
    }

    const text = readableText(history);
    expect(text).toContain('binary/encrypted');
    expect(text).toContain(agentId);
    const forbidden = [
      QUESTION,
      'rotate the database credentials',
      FRAGMENT,
      'Credentials page of the operations console',
      RESTRICTED,
      SYSTEM,
      'Answer using only the reference text',
      'Reference text:',
      RENDERED_USER,
      ANSWER,
      'Database credential rotation',
      LLM_KEY,
      env.adminKeySecret,
    ];
    for (const secret of forbidden) {
      expect({ secret, found: text.includes(secret) }).toEqual({ secret, found: false });
      // `text` also holds the decoding of every base64 run, at every alignment.
      expect(text).not.toContain(Buffer.from(secret).toString('base64'));
    }
    // DX-6: every payload (outside the search attributes) is encrypted by the codec, except the
    // SDK's own local-activity bookkeeping (marker `data`: sequence, attempt, activity type and
    // times), which the SDK core writes without the data converter and which holds no content.
    const encodings: string[] = [];
    const plain: Record<string, unknown>[] = [];
    const walk = (v: unknown, key: string, inMarkerData: boolean): void => {
      if (!v || typeof v !== 'object' || key === 'searchAttributes' || v instanceof Uint8Array) return;
      const o = v as Record<string, unknown>;
      if (o.metadata && typeof o.metadata === 'object' && 'data' in o) {
        const encoding = (o.metadata as Record<string, Uint8Array>).encoding;
        const name = encoding ? Buffer.from(encoding).toString() : '<none>';
        if (inMarkerData && name === 'json/plain')
          plain.push(JSON.parse(Buffer.from(o.data as Uint8Array).toString()));
        else encodings.push(name);
        return;
      }
      for (const [k, item] of Object.entries(o))
        walk(
          item,
          k,
          inMarkerData || (key === 'details' && k === 'data') || (key === 'data' && Array.isArray(item)),
        );
    };
    for (const event of history.events!) {
      const marker = event.markerRecordedEventAttributes;
      if (marker?.markerName === 'core_local_activity') {
        walk(marker.details?.data, 'data', true);
        walk({ ...marker, details: { ...marker.details, data: undefined } }, '', false);
      } else walk(event, '', false);
    }
    expect(encodings.length).toBeGreaterThan(5);
    expect(new Set(encodings)).toEqual(new Set(['binary/encrypted']));
    expect(plain.length).toBeGreaterThanOrEqual(3);
    for (const data of plain) {
      expect(
        Object.keys(data).every((k) =>
          [
            'seq',
            'attempt',
            'activity_id',
            'activity_type',
            'complete_time',
            'backoff',
            'original_schedule_time',
          ].includes(k),
        ),
      ).toBe(true);
      expect(['retrieveFragments', 'renderPrompt', 'storeTrace', 'finishExecution']).toContain(
        data.activity_type,
      );
    }
  });

  it('§9.3 step 7: the execution record in the database names the agent and the version it ran', async () => {
    const db = new PgClient({ connectionString: stack.database.url });
    await db.connect();
    try {
      const { rows } = await db.query(
        'SELECT kind, status, agent_id, agent_version, pipeline_id, llm_id, trace_id, api_key_id FROM executions WHERE id = $1',
        [executionId],
      );
      expect(rows).toEqual([
        {
          kind: 'agent',
          status: 'succeeded',
          agent_id: agentId,
          agent_version: 1,
          pipeline_id: pipelineId,
          llm_id: llmId,
          trace_id: traceId,
          api_key_id: user.credentials!.id,
        },
      ]);
    } finally {
      await db.end();
    }
  });

  it('§16: no question, fragment or prompt text and no LLM key appears in the API or worker logs', async () => {
    const logs = api.output.join('') + worker.output.join('');
    expect(logs.length).toBeGreaterThan(0);
    for (const secret of [QUESTION, FRAGMENT, RESTRICTED, SYSTEM, ANSWER, LLM_KEY]) {
      expect(logs).not.toContain(secret);
    }
  });
});
