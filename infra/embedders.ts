// What an embedder is (SPEC §3): texts in, L2-normalised vectors of one fixed size out, so cosine
// distance is the only metric the store needs; failures are EmbeddingErrors whose kind the
// activities act on. Implementations: infra/hash-embedder.ts (built in) and
// infra/openai-embedder.ts; infra/create-embedder.ts builds one from a stored embedding model.
export interface Embedder {
  /** Dimension of every vector returned. */
  readonly size: number;
  /** One vector per text, in the order of `texts`. */
  embed(texts: string[]): Promise<number[][]>;
}

type EmbeddingErrorKind = 'unreachable' | 'rejected' | 'retryable' | 'bad_response';

export class EmbeddingError extends Error {
  constructor(
    readonly kind: EmbeddingErrorKind,
    message: string,
    readonly upstreamStatus?: number,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'EmbeddingError';
  }
}

/** Sizes (dimensions) are positive integers; any other is a programming or configuration error. */
export function assertSize(size: number): void {
  if (!Number.isSafeInteger(size) || size < 1) {
    throw new RangeError(`Embedding size must be a positive integer, got ${size}`);
  }
}

/** Unit-length copy; the zero vector stays zero. */
export function normalise(vector: ArrayLike<number>): number[] {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i]! * vector[i]!;
  const norm = Math.sqrt(sum);
  const out = new Array<number>(vector.length);
  for (let i = 0; i < vector.length; i++) out[i] = norm > 0 ? vector[i]! / norm : 0;
  return out;
}
