// The workflows the worker registers (bundled by the Temporal SDK's webpack).
export { llmQuery } from './llm-query';
