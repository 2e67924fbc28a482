// The workflows the worker registers (bundled by the Temporal SDK's webpack).
export { agentExecution } from './agent-execution';
export { chainExecution } from './chain-execution';
export { contentRetention } from './content-retention';
export { documentBatchIngestion, documentIngestion } from './document-ingestion';
export { llmQuery } from './llm-query';
export { promptExecution } from './prompt-execution';
export { vectorIndexMaintenance } from './vector-index';
