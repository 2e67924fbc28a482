// The contracts of the workflows: what the API, the worker, the activities and the workflows agree
// on (DESIGN §2). The only module of workflows/ that activities/ import; it imports nothing but
// domain types, so the workflow sandbox and every process can share it.
export * from './executions';
export * from './chains';
export * from './vector-index';
