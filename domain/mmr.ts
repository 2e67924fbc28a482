// Maximal marginal relevance (SPEC §6 SR-4) over the fetch_k candidates of a search. Pure.
import { InvalidInput } from './errors';

/** 1 − cosine distance; computed from the raw vectors (no unit-length assumption); 0 for a zero vector. */
export function cosineSimilarity(a: readonly number[], b: readonly number[]): number {
  if (a.length !== b.length)
    throw new InvalidInput(`Vectors of different dimensions: ${a.length} and ${b.length}`);
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  if (na === 0 || nb === 0) return 0;
  return dot / (Math.sqrt(na) * Math.sqrt(nb));
}

/**
 * Indices of `candidates` in selection order: first the one most similar to the query, then
 * greedily `argmax λ·sim(q,d) − (1−λ)·max_{s∈selected} sim(d,s)` until `k` are chosen or the
 * candidates run out. Ties go to the lower index.
 */
export function mmr(
  query: number[],
  candidates: { embedding: number[] }[],
  k: number,
  lambda: number,
): number[] {
  if (!Number.isFinite(lambda) || lambda < 0 || lambda > 1)
    throw new InvalidInput(`lambda_mult must be between 0 and 1, not ${lambda}`);
  if (Number.isNaN(k)) throw new InvalidInput('k must be a number');
  candidates.forEach((c, i) => {
    if (c.embedding.length !== query.length)
      throw new InvalidInput(
        `Candidate ${i} has ${c.embedding.length} dimensions; the query has ${query.length}`,
      );
  });
  const want = Math.min(Math.floor(k), candidates.length);
  const toQuery = candidates.map((c) => cosineSimilarity(query, c.embedding));
  /** For each candidate, the highest similarity to an already selected candidate. */
  const maxToSelected = candidates.map(() => -Infinity);
  const chosen = new Set<number>();
  const order: number[] = [];

  while (order.length < want) {
    let best = -1;
    let bestScore = -Infinity;
    for (let i = 0; i < candidates.length; i++) {
      if (chosen.has(i)) continue;
      const score =
        order.length === 0 ? toQuery[i]! : lambda * toQuery[i]! - (1 - lambda) * maxToSelected[i]!;
      if (best === -1 || score > bestScore) {
        best = i;
        bestScore = score;
      }
    }
    chosen.add(best);
    order.push(best);
    const picked = candidates[best]!.embedding;
    for (let i = 0; i < candidates.length; i++) {
      if (chosen.has(i)) continue;
      maxToSelected[i] = Math.max(maxToSelected[i]!, cosineSimilarity(candidates[i]!.embedding, picked));
    }
  }
  return order;
}
