// Fixtures of the bad-input fuzz test: the routes to fuzz (from /openapi.json, so routes added
// later are covered), real objects created through the API so that path ids and header ids can
// name existing objects, known-valid bodies to mutate, and, for collections without a fixture
// here, objects created from schema-derived bodies.
import fc from 'fast-check';
import type { FakeModelServer } from '../fakes/fake-model-server';
import { settle, type DatabaseProbe } from './db-snapshot';
import { fromSchema, type Json } from './fuzz-bodies';
import type { FuzzContext, FuzzRoute } from './fuzz-requests';
import type { Stack } from './stack';

export interface FixtureDeps {
  stack: Stack;
  fake: FakeModelServer;
  probe: DatabaseProbe;
  ctx: FuzzContext;
}

/** Routes outside the registry (the codec server authenticates on its own, DX-6). */
const CODEC_BODY = {
  type: 'object',
  required: ['payloads'],
  properties: {
    payloads: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          metadata: { type: 'object', additionalProperties: { type: 'string' } },
          data: { type: 'string' },
        },
      },
    },
  },
};

/** Every operation of /openapi.json, plus the codec server's. */
export function routesOf(doc: any): FuzzRoute[] {
  const out: FuzzRoute[] = [];
  for (const [path, ops] of Object.entries<Record<string, any>>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(ops)) {
      const item = op.responses?.['200']?.content?.['application/json']?.schema?.properties?.data?.items;
      const isList = (op.parameters ?? []).some((p: any) => p.in === 'query' && p.name === 'limit');
      out.push({
        method: method.toUpperCase() as FuzzRoute['method'],
        path,
        auth: !(Array.isArray(op.security) && op.security.length === 0),
        family: path.startsWith('/api/') ? 'api' : path.startsWith('/v1/') ? 'openai' : 'foundation4',
        ...(path.startsWith('/v1/') ? { bearer: true } : {}),
        ...(op.requestBody ? { body: op.requestBody.content['application/json'].schema } : {}),
        ...(isList ? { listFields: Object.keys(item?.properties ?? { id: 1, name: 1, created_at: 1 }) } : {}),
      });
    }
  }
  for (const op of ['encode', 'decode'])
    out.push({
      method: 'POST',
      path: `/temporal-codec/${op}`,
      auth: true,
      bearer: true,
      family: 'foundation4',
      body: CODEC_BODY,
    });
  return out;
}

async function created(stack: Stack, path: string, body: unknown, status = 201): Promise<any> {
  const res = await stack.api.post(path, body);
  if (res.status !== status) throw new Error(`fixture ${path}: ${res.status} ${res.text}`);
  return res.body;
}

/**
 * Fixtures every route can point at, created through the API; fills `ctx` (id pools, header ids)
 * and returns known-valid bodies per route and the limited key.
 */
export async function createFixtures(
  deps: FixtureDeps,
): Promise<{ seeds: Map<string, Json[]>; limited: { id: string; secret: string } }> {
  const { stack, fake, probe, ctx } = deps;
  const llm = await created(stack, '/llms', {
    name: 'fuzz-llm',
    endpoint: fake.url,
    model: 'fuzz',
    api_key: 'sk-fuzz',
  });
  const model = await created(stack, '/embedding_models', { name: 'fuzz-hash', provider: 'hash', size: 64 });
  const splitterBody = {
    name: 'fuzz-splitter',
    provider: 'recursive_character',
    parameters: { chunk_size: 200, chunk_overlap: 20 },
  };
  const splitter = await created(stack, '/text_splitters', splitterBody);
  const pipelineBody = {
    name: 'fuzz-pipeline',
    embedding_model_id: model.id,
    text_splitter_id: splitter.id,
    classifications: [{ name: 'internal', includes: ['public'] }, { name: 'public' }],
    metadata_schema: { type: 'object', properties: { year: { type: 'integer' } } },
  };
  const pipeline = await created(stack, '/pipelines', pipelineBody);
  const document = {
    content: 'Durable execution retries activities.',
    classification: 'public',
    metadata: { year: 2024 },
    external_id: 'doc-1',
  };
  const doc = await created(stack, `/pipelines/${pipeline.id}/documents`, document, 202);
  const agentBody = {
    name: 'fuzz-agent',
    prompt: [
      { role: 'system', template: 'Use {context}' },
      { role: 'user', template: '{question}' },
    ],
    placeholders: [
      { name: 'question', type: 'query' },
      { name: 'context', type: 'similarity', target: 'question', params: { k: 2 } },
    ],
  };
  const agent = await created(stack, '/agents', agentBody);
  const key = await created(stack, '/api_keys', {
    name: 'fuzz-limited',
    permissions: ['read:llms', 'read:pipelines', 'execute:agents'],
  });
  await settle(probe);
  const execute = { prompt: { question: 'What retries?' }, classification: 'public', stream: false };
  const headers = { 'x-pipeline-id': pipeline.id, 'x-llm-id': llm.id };
  const traced = await stack.api.post(`/agents/${agent.id}/execute`, { ...execute, tracing: true }, headers);
  // A broken execution path is for the fuzzing to report (as the 5xx it answers), not a setup error.
  if (traced.status !== 200)
    console.warn(`fuzz: the fixture execution answered ${traced.status} ${traced.text}`);
  const encoded = await fetch(`${stack.url}/temporal-codec/encode`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${stack.env.adminKeyId}.${stack.env.adminKeySecret}`,
    },
    body: JSON.stringify({
      payloads: [
        {
          metadata: { encoding: Buffer.from('json/plain').toString('base64') },
          data: Buffer.from('"x"').toString('base64'),
        },
      ],
    }),
  }).then((r) => r.json());
  const library = await createLibraryFixtures(stack, llm.id);
  await settle(probe);

  const pools = ctx.pools;
  const ids = async (table: string, column = 'id') =>
    ((await stack.rt.db(table).select(column)) as Record<string, string>[])
      .map((r) => String(r[column]))
      .filter((id) => id !== stack.env.adminKeyId);
  for (const table of [
    'llms',
    'agents',
    'pipelines',
    'api_keys',
    'embedding_models',
    'text_splitters',
    'executions',
  ])
    pools.set(table, await ids(table));
  for (const [segment, values] of Object.entries(library.pools)) pools.set(segment, values);
  pools.set('documents', [doc.id]);
  pools.set('versions', ['1', '2']);
  const traceId = traced.headers.get('x-foundation4ai-tracing-id');
  pools.set('tracing', traceId ? [traceId] : []);
  // The OpenAI-compatible routes name agent executions as responses (issue 28).
  pools.set('responses', await ids('executions'));
  for (const values of pools.values()) for (const v of values) ctx.existing.add(v.toLowerCase());
  ctx.schema.uuids = [...ctx.existing].filter((v) => v.includes('-'));
  ctx.headerIds.pipeline = [pipeline.id];
  ctx.headerIds.llm = [llm.id];

  const seeds = new Map<string, unknown[]>([
    ['POST /llms', [{ name: 'fuzz-llm-2', endpoint: fake.url, model: 'fuzz', api_key: 'k' }]],
    ['PATCH /llms/{id}', [{ description: 'changed' }, { api_key: 'sk-2', model: 'fuzz' }]],
    [
      'POST /llms/{id}/query',
      [
        { messages: [{ role: 'user', content: 'hi' }], stream: false },
        {
          messages: [
            { role: 'system', content: 's' },
            { role: 'user', content: 'u' },
          ],
          temperature: 1,
        },
      ],
    ],
    ['POST /api_keys', [{ name: 'fuzz-key-2', permissions: ['read:llms'] }]],
    ['PATCH /api_keys/{id}', [{ description: 'changed' }]],
    ['POST /embedding_models', [{ name: 'fuzz-hash-2', provider: 'hash', size: 8 }]],
    ['POST /text_splitters', [{ ...splitterBody, name: 'fuzz-splitter-2' }]],
    ['POST /pipelines', [{ ...pipelineBody, name: 'fuzz-pipeline-2' }]],
    [
      'PATCH /pipelines/{id}',
      [{ description: 'changed' }, { classifications: pipelineBody.classifications }],
    ],
    ['POST /pipelines/{id}/documents', [document]],
    ['POST /pipelines/{id}/documents:batch', [{ documents: [document] }]],
    [
      'POST /pipelines/{id}/search',
      [{ query: 'retries', classification: 'public', k: 2, filters: { year: { $gte: 2000 } } }],
    ],
    ['POST /agents', [{ ...agentBody, name: 'fuzz-agent-2' }]],
    ['PATCH /agents/{id}', [{ description: 'changed' }]],
    [
      'POST /agents/{id}/execute',
      [execute, { ...execute, stream: 'sse', filters: { context: { year: { $gte: 2000 } } } }],
    ],
    ['POST /agents/{id}/search', [execute]],
    [
      'POST /v1/responses',
      [
        {
          prompt: { id: agent.id, variables: { question: 'What retries?' } },
          model: llm.id,
          metadata: { pipeline: pipeline.id, classification: 'public' },
        },
        {
          prompt: { id: 'fuzz-agent', variables: { question: { type: 'input_text', text: 'Why?' } } },
          model: 'fuzz-llm',
          metadata: { pipeline: 'fuzz-pipeline', classification: '["public"]', filters: '{"context": {}}' },
          stream: true,
        },
      ],
    ],
    ['POST /temporal-codec/encode', [encoded]],
    ['POST /temporal-codec/decode', [encoded]],
    ...Object.entries(library.seeds),
  ]);
  return { seeds: seeds as Map<string, Json[]>, limited: { id: key.id, secret: key.secret } };
}

/** Seed 002 objects (§12, §13): a prompt routed to the fake LLM, an embeddable one, a policy, a chain. */
async function createLibraryFixtures(
  stack: Stack,
  llmId: string,
): Promise<{ pools: Record<string, string[]>; seeds: Record<string, Json[]> }> {
  const optional = async (path: string, body: unknown): Promise<any> => {
    const res = await stack.api.post(path, body);
    if (res.status >= 300)
      console.warn(`fuzz: fixture ${path} answered ${res.status} ${res.text.slice(0, 300)}`);
    return res.status < 300 ? res.body : undefined;
  };
  const policy = await optional('/api/v1/routing-policies', { name: 'fuzz-policy', llms: [llmId] });
  await optional('/api/v1/prompts', {
    promptId: 'fuzz-snippet',
    name: 'fuzz-snippet',
    userPrompt: 'A snippet.',
  });
  await optional('/api/v1/prompts', {
    promptId: 'fuzz-routed',
    name: 'fuzz-routed',
    userPrompt: 'Say hi.',
    customGatewayId: llmId,
  });
  const chain = await optional('/api/v1/chains', {
    name: 'fuzz-chain',
    steps: [{ order: 1, promptId: 'fuzz-routed', outputVariable: 'greeting' }],
  });
  return {
    pools: {
      prompts: ['fuzz-snippet', 'fuzz-routed'],
      'routing-policies': policy?.routingPolicy?.id ? [policy.routingPolicy.id] : [],
      chains: chain?.chainId ? [chain.chainId] : [],
    },
    seeds: {
      'POST /api/v1/prompts': [
        { name: 'fuzz-prompt-2', userPrompt: 'Hello {{who}}', temperature: 0.2 },
        {
          promptId: 'fuzz-3',
          name: 'fuzz-prompt-3',
          userPrompt: 'Use {{prompt:fuzz-snippet}}',
          routingPolicyId: policy?.routingPolicy?.id ?? null,
        },
      ],
      'PUT /api/v1/prompts/{promptId}': [
        { userPrompt: 'Changed.' },
        { temperature: 1.5, systemPrompt: null },
      ],
      'POST /api/v1/routing-policies': [{ name: 'fuzz-policy-2', llms: [llmId] }],
      'PUT /api/v1/routing-policies/{id}': [{ llms: [llmId] }],
      'POST /api/gateway/execute': [
        { prompt: 'Hello {{prompt:fuzz-snippet}}', stream: false },
        { prompt: 'Hi {{who}}', variables: { who: 'you' }, sourcePromptId: 'fuzz-routed', stream: 'ndjson' },
      ],
      'POST /api/v1/chains': [{ name: 'fuzz-chain-2', steps: [{ order: 1, promptId: 'fuzz-routed' }] }],
      'POST /api/v1/chains/{chainId}/execute': [
        { inputs: { topic: 'durability' } },
        { options: { stopOnError: false } },
      ],
    },
  };
}

/**
 * Routes added later without fixtures here still get existing ids: their collection is POSTed
 * schema-derived bodies (fixed seed) until one is accepted, and the ids of the answer are kept.
 */
export async function discoverObjects(deps: FixtureDeps, all: FuzzRoute[], seed: number): Promise<void> {
  const { stack, probe, ctx } = deps;
  const collections = all.filter((r) => r.method === 'POST' && r.body && !r.path.includes('{') && !r.bearer);
  for (const route of collections) {
    const segment = route.path.split('/').pop()!;
    if ((ctx.pools.get(segment) ?? []).length > 0) continue;
    const found: string[] = [];
    for (const body of fc.sample(fromSchema(route.body, ctx.schema), { seed, numRuns: 25 })) {
      const res = await stack.api.post(route.path, body);
      if (res.status >= 300) continue;
      collectIds(res.body, found);
      break;
    }
    if (found.length > 0) ctx.pools.set(segment, found);
    for (const id of found) ctx.existing.add(id.toLowerCase());
  }
  await settle(probe);
}

/** `id`, `...Id` and `..._id` string fields of an answer, two levels deep. */
function collectIds(value: unknown, out: string[], depth = 0): void {
  if (!value || typeof value !== 'object' || depth > 2) return;
  for (const [key, v] of Object.entries(value)) {
    if (typeof v === 'string' && (key === 'id' || /(Id|_id)$/.test(key)) && !out.includes(v)) out.push(v);
    else collectIds(v, out, depth + 1);
  }
}
