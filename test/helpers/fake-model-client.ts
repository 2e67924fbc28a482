// The fake model server of one test file and an openai client on it, as the fake's own tests use
// them: started before the file's tests, its scripts and records reset after each, closed after all.
import OpenAI from 'openai';
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';

export function fakeModelWithClient(): { readonly server: FakeModelServer; readonly client: OpenAI } {
  const fake = {} as { server: FakeModelServer; client: OpenAI };
  beforeAll(async () => {
    fake.server = await startFakeModelServer();
    // The SDK never retries by itself here, as in the product (LLM-3).
    fake.client = new OpenAI({ apiKey: 'x', baseURL: fake.server.url, maxRetries: 0 });
  });
  afterEach(() => fake.server.reset());
  afterAll(() => fake.server.close());
  return fake;
}
