// The streams benchmark's scenarios (issue 25 item 6) and the selection by BENCH_STREAMS_SCENARIOS,
// BENCH_STREAMS_SCALE and BENCH_STREAMS_S3_ROUNDS (bench/README.md, "streams").
import { envInt } from './env';
import type { StreamScenario } from './streams-phase';

export const SCENARIOS: StreamScenario[] = [
  {
    id: 'S1',
    label: '300 clients, 50 deltas 100 ms apart',
    clients: 300,
    deltas: 50,
    delayMs: 100,
    rounds: 0,
    stack: 'production',
  },
  {
    id: 'S2',
    label: '50 clients, 300 deltas 20 ms apart',
    clients: 50,
    deltas: 300,
    delayMs: 20,
    rounds: 0,
    stack: 'production',
  },
  {
    id: 'S2-short',
    label: 'S2 with 60 deltas (CPU per delta)',
    clients: 50,
    deltas: 60,
    delayMs: 20,
    rounds: 0,
    stack: 'production',
  },
  {
    id: 'S3',
    label: '1,000 clients, 60 deltas 250 ms apart, two rounds',
    clients: 1000,
    deltas: 60,
    delayMs: 250,
    rounds: 2,
    stack: 'production',
  },
  {
    id: 'E1',
    label: 'embedded quick start, 50 clients, 50 deltas 100 ms apart',
    clients: 50,
    deltas: 50,
    delayMs: 100,
    rounds: 0,
    stack: 'embedded',
  },
];

export function selectedScenarios(): StreamScenario[] {
  const raw = process.env.BENCH_STREAMS_SCENARIOS ?? '';
  const ids =
    raw.trim() === '' ? SCENARIOS.map((s) => s.id) : raw.split(',').map((s) => s.trim().toUpperCase());
  const unknown = ids.filter((id) => !SCENARIOS.some((s) => s.id === id));
  if (unknown.length)
    throw new Error(
      `BENCH_STREAMS_SCENARIOS: unknown ${unknown.join(', ')} (known: ${SCENARIOS.map((s) => s.id).join(', ')})`,
    );
  // S2's CPU per delta needs its short variant.
  if (ids.includes('S2') && !ids.includes('S2-SHORT')) ids.push('S2-SHORT');
  const scale = Number(process.env.BENCH_STREAMS_SCALE ?? '1');
  if (!(scale > 0 && scale <= 1))
    throw new Error(`BENCH_STREAMS_SCALE must be in (0, 1] (got "${process.env.BENCH_STREAMS_SCALE}")`);
  const rounds = envInt('BENCH_STREAMS_S3_ROUNDS', 2);
  return SCENARIOS.filter((s) => ids.includes(s.id.toUpperCase())).map((s) => ({
    ...s,
    clients: Math.max(1, Math.ceil(s.clients * scale)),
    rounds: s.id === 'S3' ? rounds : s.rounds,
  }));
}
