import type { EmbeddingModel } from '../../db/embedding-model-store';
import { QueryEmbeddings } from '../../services/query-embeddings';

const model = {
  id: 'm1',
  provider: 'hash',
  parameters: {},
  size: 8,
  hasApiKey: false,
} as unknown as EmbeddingModel;

describe('QueryEmbeddings (EX-2)', () => {
  it('embeds a text once per execution, again for another execution, and forgets a failed embedding', async () => {
    const calls: string[] = [];
    let fail = false;
    const queries = new QueryEmbeddings(async (_model, text) => {
      calls.push(text);
      if (fail) throw new Error('embedding server down');
      return [text.length];
    });
    const first = queries.forExecution('e1');
    expect(await Promise.all([first(model, 'q'), first(model, 'q'), first(model, 'other')])).toEqual([
      [1],
      [1],
      [5],
    ]);
    expect(calls).toEqual(['q', 'other']);
    await queries.forExecution('e2')(model, 'q');
    expect(calls).toEqual(['q', 'other', 'q']);
    fail = true;
    await expect(queries.forExecution('e3')(model, 'x')).rejects.toThrow('embedding server down');
    fail = false;
    expect(await queries.forExecution('e3')(model, 'x')).toEqual([1]);
    expect(calls).toEqual(['q', 'other', 'q', 'x', 'x']);
  });

  it('lets go of every vector once it expired, unread (each one holds its activity in memory)', async () => {
    const queries = new QueryEmbeddings(async (_model, text) => [text.length], 50);
    await Promise.all(['a', 'b', 'c'].map((text) => queries.forExecution('e1')(model, text)));
    expect(queries.held).toBe(3);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(queries.held).toBe(0);
  });
});
