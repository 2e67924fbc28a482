// The execution benchmark's last phase (issue 26 item 6): what dominates the CPU of the API and
// the worker at the concurrent phase's load. A production stack of its own (so profiling costs
// nothing in the measured phases) runs with `--cpu-prof`, takes the same closed loop of clients,
// and stops cleanly so each process writes its profile; the report lists each one's top frames
// by self time. The profile spans the process's life: its start and the agent's setup (a few
// hundred fragments) are in it, small against the loop.
import path from 'node:path';
import type { FakeModelServer } from '../../test/fakes/fake-model-server';
import { setupAgentBench } from './agent-setup';
import { cpuProfileArgs, topSelfTime, type SelfTime } from './cpu-profile';
import { ROOT } from './env';
import { agentryColumn } from './execution-columns';
import { concurrentPhase } from './execution-phases';
import { printRows } from './report';
import { startAgentryStack } from './stacks';

export type ProcessProfiles = Record<'api' | 'worker', SelfTime[]>;

export async function profileConcurrentPhase(
  fake: FakeModelServer,
  agentOptions: Parameters<typeof setupAgentBench>[2],
  clients: number,
  durationS: number,
  interrupted: () => boolean,
): Promise<ProcessProfiles> {
  const dir = path.join(ROOT, 'bench', '.state', `profiles-${Date.now()}`);
  const stack = await startAgentryStack(
    'production',
    'execution-profile',
    {},
    {
      nodeArgs: {
        api: cpuProfileArgs(path.join(dir, 'api')),
        worker: cpuProfileArgs(path.join(dir, 'worker')),
      },
    },
  );
  try {
    const agent = await setupAgentBench(stack.http, fake, agentOptions);
    await concurrentPhase(agentryColumn(stack, agent), clients, durationS, interrupted);
  } finally {
    await stack.stop();
  }
  return { api: topSelfTime(path.join(dir, 'api')), worker: topSelfTime(path.join(dir, 'worker')) };
}

export function printProfiles(profiles: ProcessProfiles, clients: number): void {
  for (const [name, frames] of Object.entries(profiles))
    printRows(
      `${name}: top self time at c=${clients} (CPU profile; % of the process's busy time)`,
      ['self ms', '%', 'frame'],
      frames.map((f) => [String(f.self_ms), String(f.percent), f.frame]),
    );
}
