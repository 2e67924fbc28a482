// The agent of the execution and load benchmarks, set up through the API: embedding model,
// splitter, pipeline, synthetic documents ingested to the end, an LLM on the fake model server.
import type { FakeModelServer } from '../../test/fakes/fake-model-server';
import type { HttpClient } from './harness';
import { Corpus } from './synthetic';

/** One query placeholder and one similarity placeholder (k 5) over the pipeline. */
export const BENCH_AGENT = {
  prompt: [
    { role: 'system', template: 'Answer using only the reference text.' },
    { role: 'user', template: 'Reference text:\n{context}\n\nQuestion: {question}' },
  ],
  placeholders: [
    { name: 'question', type: 'query' },
    { name: 'context', type: 'similarity', target: 'question', params: { k: 5 } },
  ],
};

export interface AgentBench {
  pipelineId: string;
  llmId: string;
  agentId: string;
  documents: number;
  /** 64 questions from the corpus' vocabularies (another random stream than the documents). */
  questions: string[];
}

/**
 * Through the API: a `hash` embedding model of `dims`, a recursive splitter (1000), a pipeline
 * (`internal` includes `public`), `fragments` ~1 KB fragments of synthetic text (documents of 30
 * paragraphs, one fragment each, classifications alternating) ingested to the end, an LLM on the
 * fake model server and the agent `BENCH_AGENT`.
 */
export async function setupAgentBench(
  http: HttpClient,
  fake: FakeModelServer,
  options: { name: string; model: string; fragments: number; seed: number; dims: number },
): Promise<AgentBench> {
  const model = await http.expect<{ id: string }>(201, 'POST', '/embedding_models', {
    name: `bench-hash-${options.dims}`,
    provider: 'hash',
    size: options.dims,
  });
  const splitter = await http.expect<{ id: string }>(201, 'POST', '/text_splitters', {
    name: 'bench-1k',
    provider: 'recursive_character',
    parameters: { chunk_size: 1000, chunk_overlap: 0 },
  });
  const pipeline = await http.expect<{ id: string }>(201, 'POST', '/pipelines', {
    name: options.name,
    embedding_model_id: model.id,
    text_splitter_id: splitter.id,
    classifications: [{ name: 'internal', includes: ['public'] }, { name: 'public' }],
  });
  const llm = await http.expect<{ id: string }>(201, 'POST', '/llms', {
    name: 'bench-fake',
    endpoint: fake.url,
    model: options.model,
    api_key: 'sk-bench',
  });
  const agent = await http.expect<{ id: string }>(201, 'POST', '/agents', {
    name: options.name,
    ...BENCH_AGENT,
  });
  const corpusOptions = { seed: options.seed, topics: 20, wordsPerTopic: 100, commonWords: 500 };
  const corpus = new Corpus(corpusOptions);
  const documents: unknown[] = [];
  for (let fragments = 0, i = 0; fragments < options.fragments; i++) {
    const paragraphs = Math.min(30, options.fragments - fragments);
    const doc = corpus.document(paragraphs);
    documents.push({
      content: doc.content,
      classification: i % 2 === 0 ? 'internal' : 'public',
      metadata: { topic: doc.topic },
      external_id: `bench-${i}`,
    });
    fragments += paragraphs;
  }
  await http.expect(202, 'POST', `/pipelines/${pipeline.id}/documents:batch`, { documents });
  const unfinished = `/pipelines/${pipeline.id}/documents?status$in=pending,processing&limit=1`;
  for (let i = 0; ; i++) {
    const page = await http.expect<{ data: unknown[] }>(200, 'GET', unfinished);
    if (page.data.length === 0) break;
    if (i > 1200) throw new Error('ingestion did not finish in 4 minutes');
    await new Promise((r) => setTimeout(r, 200));
  }
  const failed = await http.expect<{ data: unknown[] }>(
    200,
    'GET',
    `/pipelines/${pipeline.id}/documents?status=failed&limit=1`,
  );
  if (failed.data.length > 0) throw new Error('some documents failed to ingest');
  // Same vocabularies, another random stream: queries apart from the documents.
  const queries = new Corpus(corpusOptions).reseed(options.seed + 1);
  return {
    pipelineId: pipeline.id,
    llmId: llm.id,
    agentId: agent.id,
    documents: documents.length,
    questions: Array.from({ length: 64 }, () => queries.query().text),
  };
}
