// The columns of the execution benchmark, each able to run one execution (sequential phase) or a
// closed loop of concurrent ones, all against the same fake model and Temporal dev server:
//  - direct: the model called directly (openai SDK, streamed, the rendered prompt Agentry sent);
//  - floor / floor-eager: the bare-Temporal workflow of the same shape (bench/lib/floor-worker.ts);
//  - production / embedded: Agentry through HTTP with authentication, as a client would.
import OpenAI from 'openai';
import type { ResponseCreateParamsStreaming } from 'openai/resources/responses/responses';
import { workflowIdFor } from '../../workflows/contracts';
import { closedLoop, type ClosedLoop } from './closed-loop';
import { nowMs } from './env';
import type { Floor } from './floor';
import { streamExecution } from './harness';
import type { AgentryStack } from './stacks';

export type ColumnName = 'direct' | 'floor' | 'floor-eager' | 'production' | 'embedded';

export interface ColumnRun {
  ttftMs: number;
  totalMs: number;
  /** Workflow of the run (not for `direct`). */
  workflowId?: string;
  sentAt?: number;
  headersMs?: number;
  /** Floor runs: whether the server honoured `requestEagerStart`. */
  eager?: boolean;
  /** Agentry runs: delta lines in the answer. */
  deltas?: number;
}

export interface Column {
  name: ColumnName;
  label: string;
  one(i: number): Promise<ColumnRun>;
  /** Absent where the concurrent phase reuses another column's (floor-eager → floor). */
  loop?(
    clients: number,
    durationS: number,
    stop: () => boolean,
  ): Promise<ClosedLoop & { workflowIds: string[] }>;
  /** Processes whose CPU and RSS belong to this column, by name. */
  processes: Record<string, number | undefined>;
  readyUrl?: string;
}

/** A closed loop of `once`, keeping the first 50 workflow ids. */
async function loopOf(
  clients: number,
  durationS: number,
  stop: () => boolean,
  once: (i: number) => Promise<ColumnRun>,
) {
  const workflowIds: string[] = [];
  const loop = await closedLoop(clients, nowMs() + durationS * 1000, stop, async (c, i) => {
    const run = await once(c * 7 + i);
    if (run.workflowId && workflowIds.length < 50) workflowIds.push(run.workflowId);
    return run;
  });
  return { ...loop, workflowIds };
}

export function directColumn(baseURL: string, rendered: Record<string, unknown>): Column {
  const client = new OpenAI({ apiKey: 'sk-bench', baseURL, maxRetries: 0 });
  const params = { ...rendered, stream: true } as unknown as ResponseCreateParamsStreaming;
  const one = async (): Promise<ColumnRun> => {
    const t = nowMs();
    let first = NaN;
    const stream = await client.responses.create(params);
    for await (const event of stream) {
      if (event.type === 'response.output_text.delta' && Number.isNaN(first)) first = nowMs() - t;
    }
    if (Number.isNaN(first)) throw new Error('the model answered no delta');
    return { ttftMs: first, totalMs: nowMs() - t };
  };
  return {
    name: 'direct',
    label: 'model direct',
    one,
    loop: (clients, durationS, stop) => loopOf(clients, durationS, stop, one),
    processes: {},
  };
}

export function floorColumns(floor: Floor): Column[] {
  const processes = { floor: floor.child.pid };
  return [
    {
      name: 'floor',
      label: 'bare Temporal floor',
      one: () => floor.one(false),
      loop: (clients, durationS) => floor.loop(clients, durationS),
      processes,
    },
    { name: 'floor-eager', label: 'floor, eager start', one: () => floor.one(true), processes },
  ];
}

export interface AgentTarget {
  agentId: string;
  pipelineId: string;
  llmId: string;
  questions: string[];
}

export function agentryColumn(stack: AgentryStack, target: AgentTarget): Column {
  const url = `${stack.apiUrl}/agents/${target.agentId}/execute`;
  const headers = { ...stack.key, 'x-pipeline-id': target.pipelineId, 'x-llm-id': target.llmId };
  const tracing = process.env.BENCH_TRACING === '1';
  const one = async (i: number): Promise<ColumnRun> => {
    const question = target.questions[i % target.questions.length]!;
    const body = { prompt: { question }, classification: 'internal', ...(tracing ? { tracing: true } : {}) };
    const ex = await streamExecution(url, headers, body);
    return { ...ex, workflowId: workflowIdFor(ex.executionId) };
  };
  const processes: Record<string, number | undefined> =
    stack.mode === 'embedded'
      ? { 'api+worker': stack.api.child.pid }
      : { api: stack.api.child.pid, worker: stack.worker.child.pid };
  return {
    name: stack.mode,
    label: stack.mode === 'embedded' ? 'Agentry embedded' : 'Agentry production',
    one,
    loop: (clients, durationS, stop) => loopOf(clients, durationS, stop, one),
    processes,
    readyUrl: `${stack.apiUrl}/readyz`,
  };
}
