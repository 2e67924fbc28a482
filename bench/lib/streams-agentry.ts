// The streams benchmark's columns on a stack: Agentry set up through its API (an agent with a
// system message and one query placeholder, the empty pipeline an execution names, one LLM per
// scenario whose model name paces it), and the bare-Temporal floor beside it. Each column is what
// bench/lib/streams-phase.ts measures: its processes, its database and Redis, its client.
import type { PacedModel } from './paced-model';
import type { AgentryStack } from './stacks';
import { SYSTEM, askAgentry, type Received } from './stream-clients';
import type { StreamFloor } from './stream-floor';
import type { StreamScenario } from './streams-phase';

export interface StackColumn {
  column: 'floor' | 'agentry';
  processes: Record<string, number | undefined>;
  database?: string;
  redisCpu?: () => Promise<number>;
  askFor(scenario: StreamScenario): (q: string) => Promise<Received>;
}

/** The warm-up's short executions (10 deltas, 10 ms apart) before a stack's scenarios. */
export const WARMUP: StreamScenario = {
  id: 'warmup',
  label: 'warm-up',
  clients: 1,
  deltas: 10,
  delayMs: 10,
  rounds: 1,
  stack: 'production',
};

const AGENT = {
  name: 'bench-streams',
  prompt: [
    { role: 'system', template: SYSTEM },
    { role: 'user', template: '{question}' },
  ],
  placeholders: [{ name: 'question', type: 'query' }],
};

const modelOf = (s: StreamScenario) => `streams-${s.id}`;

export async function agentryColumn(
  stack: AgentryStack,
  model: PacedModel,
  scenarios: StreamScenario[],
  timeoutMs: number,
  redisCpu?: () => Promise<number>,
): Promise<StackColumn> {
  const agent = await stack.http.expect<{ id: string }>(201, 'POST', '/agents', AGENT);
  const embedder = await stack.http.expect<{ id: string }>(201, 'POST', '/embedding_models', {
    name: 'bench-hash-8',
    provider: 'hash',
    size: 8,
  });
  const splitter = await stack.http.expect<{ id: string }>(201, 'POST', '/text_splitters', {
    name: 'bench-1k',
    provider: 'recursive_character',
    parameters: { chunk_size: 1000, chunk_overlap: 0 },
  });
  const pipeline = await stack.http.expect<{ id: string }>(201, 'POST', '/pipelines', {
    name: 'bench-streams',
    embedding_model_id: embedder.id,
    text_splitter_id: splitter.id,
    classifications: [{ name: 'internal' }],
  });
  const llms = new Map<string, string>();
  for (const s of [...scenarios, WARMUP]) {
    const llm = await stack.http.expect<{ id: string }>(201, 'POST', '/llms', {
      name: `bench-streams-${s.id}`,
      endpoint: model.url,
      model: modelOf(s),
      api_key: 'sk-bench',
    });
    llms.set(s.id, llm.id);
  }
  const url = `${stack.apiUrl}/agents/${agent.id}/execute`;
  const embedded = stack.mode === 'embedded';
  return {
    column: 'agentry',
    processes: embedded
      ? { embedded: stack.api.child.pid }
      : { api: stack.api.child.pid, worker: stack.worker.child.pid },
    // Embedded, the quick start's PGlite runs in its one process.
    ...(embedded ? {} : { database: stack.databaseName }),
    ...(redisCpu ? { redisCpu } : {}),
    askFor: (s) => (q) =>
      askAgentry(
        url,
        { ...stack.key, 'x-pipeline-id': pipeline.id, 'x-llm-id': llms.get(s.id)! },
        q,
        timeoutMs,
      ),
  };
}

export const floorColumn = (
  floor: StreamFloor,
  timeoutMs: number,
  redisCpu?: () => Promise<number>,
): StackColumn => ({
  column: 'floor',
  processes: floor.processes,
  ...(redisCpu ? { redisCpu } : {}),
  askFor: (s) => (q) => floor.ask(modelOf(s), q, timeoutMs),
});
