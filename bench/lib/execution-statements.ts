// The execution benchmark's statements phase (DESIGN §6 "work per execution": ≤ 8 SQL statements
// per agent execution with 1 query + 1 similarity placeholder): a production stack of its own
// whose API and worker reach PostgreSQL through a counting proxy (bench/lib/pg-statement-proxy.ts;
// no measured phase pays its hop), the benchmark's agent and warm-up executions, then sequential
// executions and a closed loop of concurrent ones, each counted from its first request to the
// last statement it caused (the outcome's record comes after the stream's end), less what the
// stack sends while idle over the same time.
import { setupAgentBench } from './agent-setup';
import { ADMIN_DATABASE_URL, nowMs } from './env';
import { agentryColumn } from './execution-columns';
import { startStatementProxy, type StatementProxy } from './pg-statement-proxy';
import { round } from './report';
import { startAgentryStack } from './stacks';

export interface StatementCount {
  /** Executions counted, and those of them that failed (their statements are in the count). */
  executions: number;
  errors: number;
  /** Through the proxy between the first counted request and the quiet after the last. */
  statements: number;
  per_execution: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until no statement went through for 1 s (at most 15 s). */
async function quiet(proxy: StatementProxy): Promise<void> {
  let last = proxy.statements();
  let since = nowMs();
  for (const start = nowMs(); nowMs() - start < 15_000;) {
    await sleep(200);
    const now = proxy.statements();
    if (now !== last) [last, since] = [now, nowMs()];
    else if (nowMs() - since >= 1000) return;
  }
}

/** What `run` makes the stack send, less its idle rate over the same time, per execution. */
async function counted(
  proxy: StatementProxy,
  idlePerS: number,
  run: () => Promise<{ completed: number; errors: number }>,
): Promise<StatementCount> {
  const [before, startedAt] = [proxy.statements(), nowMs()];
  const { completed, errors } = await run();
  await quiet(proxy);
  const statements = proxy.statements() - before;
  const idle = idlePerS * ((nowMs() - startedAt) / 1000);
  const executions = completed + errors;
  return {
    executions,
    errors,
    statements,
    per_execution: executions === 0 ? NaN : round((statements - idle) / executions, 1),
  };
}

export interface StatementFigures {
  /** What the idle stack sent per second (measured first), subtracted from both counts. */
  idle_per_s: number;
  /**
   * One execution at a time: each one that finds the 1 s lookup cache expired reads its rows
   * again (agent, pipeline, LLM, embedding model), so the figure depends on the machine's pace.
   */
  sequential: StatementCount;
  /** The closed loop of the concurrent phase, where those re-reads are shared: the targeted figure. */
  concurrent: StatementCount;
}

export async function countStatements(
  fake: Parameters<typeof setupAgentBench>[1],
  agentOptions: Parameters<typeof setupAgentBench>[2],
  options: {
    executions: number;
    warmup: number;
    clients: number;
    durationS: number;
    stop: () => boolean;
    root?: string | undefined;
  },
): Promise<StatementFigures> {
  const server = new URL(ADMIN_DATABASE_URL);
  const proxy = await startStatementProxy(server.hostname, Number(server.port || 5432));
  try {
    const stack = await startAgentryStack(
      'production',
      'execution-statements',
      {},
      { databaseAddress: proxy.address, ...(options.root ? { root: options.root } : {}) },
    );
    try {
      const column = agentryColumn(stack, await setupAgentBench(stack.http, fake, agentOptions));
      for (let i = 0; i < options.warmup; i++) await column.one(i);
      await quiet(proxy);
      const idleFrom = proxy.statements();
      await sleep(2000);
      const idlePerS = (proxy.statements() - idleFrom) / 2;
      const sequential = await counted(proxy, idlePerS, async () => {
        for (let i = 0; i < options.executions; i++) await column.one(options.warmup + i);
        return { completed: options.executions, errors: 0 };
      });
      const concurrent = await counted(proxy, idlePerS, async () => {
        const loop = await column.loop!(options.clients, options.durationS, options.stop);
        return { completed: loop.completed, errors: loop.errors.length };
      });
      return { idle_per_s: round(idlePerS, 2), sequential, concurrent };
    } finally {
      await stack.stop();
    }
  } finally {
    await proxy.close();
  }
}
