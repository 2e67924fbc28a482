// CPU profiles of the product's processes (issue 26 item 6): a process started with
// `--cpu-prof --cpu-prof-dir=<dir>` writes a V8 .cpuprofile when it exits; this reads it back as
// the functions with the most self time, so a report shows what dominates a process's CPU.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './env';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const IDLE = '(idle)';

export interface SelfTime {
  /** `function (file:line)`, the file relative to the project or a node/dependency name. */
  frame: string;
  self_ms: number;
  /** Of the process's busy time (the profile's sampled time less `(idle)`). */
  percent: number;
}

/** Node's arguments that make a process write its profile into `dir` when it exits. */
export const cpuProfileArgs = (dir: string): string[] => ['--cpu-prof', `--cpu-prof-dir=${dir}`];

function frameName({ functionName, url, lineNumber }: ProfileNode['callFrame']): string {
  const name = functionName || '(anonymous)';
  if (!url) return name;
  const file = url.replace(/^file:\/\//, '');
  const deps = file.lastIndexOf('/node_modules/');
  const where =
    deps >= 0
      ? file.slice(deps + '/node_modules/'.length)
      : file.startsWith(ROOT)
        ? path.relative(ROOT, file)
        : file;
  return `${name} (${where}:${lineNumber + 1})`;
}

/** The `top` busy frames by self time of the one profile in `dir` (the newest, if several). */
export function topSelfTime(dir: string, top = 12): SelfTime[] {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .sort();
  if (files.length === 0) throw new Error(`no .cpuprofile in ${dir}: did the process exit cleanly?`);
  const profile = JSON.parse(readFileSync(path.join(dir, files.at(-1)!), 'utf8')) as CpuProfile;
  const frameOf = new Map(profile.nodes.map((n) => [n.id, frameName(n.callFrame)]));
  const selfUs = new Map<string, number>();
  let totalUs = 0;
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i] ?? 0;
    totalUs += us;
    const frame = frameOf.get(id) ?? '(unknown)';
    selfUs.set(frame, (selfUs.get(frame) ?? 0) + us);
  });
  const busyUs = totalUs - (selfUs.get(IDLE) ?? 0);
  return [...selfUs.entries()]
    .filter(([frame]) => frame !== IDLE)
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([frame, us]) => ({
      frame,
      self_ms: Math.round(us / 100) / 10,
      percent: Math.round((1000 * us) / Math.max(1, busyUs)) / 10,
    }));
}
