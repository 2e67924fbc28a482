// The contract of the vector index maintenance workflow (issue 26): its id and input.
/** The one workflow that builds or rebuilds an embedding model's index (issue 26). */
export const vectorIndexWorkflowId = (embeddingModelId: string): string => `vector-index-${embeddingModelId}`;

export interface VectorIndexInput {
  embeddingModelId: string;
  /** Rebuild even when the index has the model's parameters (a rebuild requested). */
  rebuild?: boolean;
}
