// The execution benchmark's Responses rounds (issues 28 and 34): per Agentry mode, rounds of the
// same question as one POST /agents/{id}/execute, one POST /v1/responses (SSE) and one
// `response.create` turn on a WebSocket of /v1/responses that stays open for all the rounds (the
// mode's point: one connection, many turns), in an order that rotates each round. Time to first
// token = sent → the first `response.output_text.delta` read. Reported: the Responses protocol's
// added TTFT over the execute route (target ≤ 2 ms), and the WebSocket turn's added TTFT over the
// model called directly against the bare-Temporal floor of the same shape + 10 ms (DESIGN §6).
import WebSocket from 'ws';
import type { AgentBench } from './agent-setup';
import { nowMs } from './env';
import type { Results } from './execution-report';
import { streamExecution } from './harness';
import { printTable, round, summarise, writeResults, type Figure } from './report';
import type { AgentryStack } from './stacks';

type Summary = ReturnType<typeof summarise>;

export interface ResponsesFigures {
  rounds: number;
  execute_ttft_ms: Summary;
  responses_ttft_ms: Summary;
  websocket_ttft_ms: Summary;
  /** Per round, the Responses TTFT minus the execute TTFT of the same round. */
  paired_added_ms: Summary;
  /** Per round, the WebSocket turn's TTFT minus the HTTP /v1/responses one's. */
  websocket_vs_http_ms: Summary;
}

const requestOf = (agent: AgentBench, question: string) => ({
  prompt: { id: agent.agentId, variables: { question } },
  model: agent.llmId,
  metadata: { pipeline: agent.pipelineId, classification: 'internal' },
});

const bearer = (stack: AgentryStack) => `Bearer ${stack.key['x-api-key']}.${stack.key['x-api-key-secret']}`;

/** Streams POST /v1/responses (SSE) to its end; its TTFT. */
async function streamResponse(stack: AgentryStack, agent: AgentBench, question: string): Promise<number> {
  const sentAt = nowMs();
  const res = await fetch(`${stack.apiUrl}/v1/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: bearer(stack) },
    body: JSON.stringify({ ...requestOf(agent, question), stream: true }),
    signal: AbortSignal.timeout(60_000),
  });
  if (res.status !== 200 || !res.body) throw new Error(`/v1/responses → ${res.status}: ${await res.text()}`);
  const decoder = new TextDecoder();
  let text = '';
  let ttftMs = NaN;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    text += decoder.decode(chunk, { stream: true });
    if (Number.isNaN(ttftMs) && text.includes('event: response.output_text.delta\n'))
      ttftMs = nowMs() - sentAt;
  }
  if (!text.includes('event: response.completed\n') || Number.isNaN(ttftMs))
    throw new Error(`/v1/responses: the stream ended without a delta and response.completed`);
  return ttftMs;
}

/** One WebSocket of /v1/responses, its turns one after the other. */
class BenchSocket {
  private onMessage: ((message: { type: string }) => void) | undefined;

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data) => this.onMessage?.(JSON.parse(String(data)) as { type: string }));
  }

  static open(stack: AgentryStack): Promise<BenchSocket> {
    const ws = new WebSocket(`${stack.apiUrl.replace(/^http/, 'ws')}/v1/responses`, {
      headers: { authorization: bearer(stack) },
      perMessageDeflate: false,
    });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new BenchSocket(ws)));
      ws.once('error', reject);
    });
  }

  /** A turn to its `response.completed`; its TTFT. */
  turn(event: object): Promise<number> {
    const sentAt = nowMs();
    let ttftMs = NaN;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('WebSocket turn: no end within 60 s')), 60_000);
      const fail = (err: Error) => {
        clearTimeout(timer);
        this.onMessage = undefined;
        reject(err);
      };
      this.ws.once('close', (code) => fail(new Error(`WebSocket closed (${code}) mid-turn`)));
      this.onMessage = (message) => {
        if (message.type === 'response.output_text.delta' && Number.isNaN(ttftMs)) ttftMs = nowMs() - sentAt;
        if (message.type === 'error' || message.type === 'response.failed')
          return fail(new Error(`WebSocket turn: ${JSON.stringify(message)}`));
        if (message.type !== 'response.completed') return;
        clearTimeout(timer);
        this.ws.removeAllListeners('close');
        this.onMessage = undefined;
        if (Number.isNaN(ttftMs)) reject(new Error('WebSocket turn: completed without a delta'));
        else resolve(ttftMs);
      };
      this.ws.send(JSON.stringify({ type: 'response.create', ...event }));
    });
  }

  close(): void {
    this.ws.close();
  }
}

/** Rounds of an execute, a response and a WebSocket turn (the order rotating), the columns' questions. */
export async function responsesRounds(
  stack: AgentryStack,
  agent: AgentBench,
  settings: { warmup: number; responsesRounds: number },
  interrupted: () => boolean,
): Promise<ResponsesFigures> {
  const url = `${stack.apiUrl}/agents/${agent.agentId}/execute`;
  const headers = { ...stack.key, 'x-pipeline-id': agent.pipelineId, 'x-llm-id': agent.llmId };
  const socket = await BenchSocket.open(stack);
  const samples: [number[], number[], number[]] = [[], [], []];
  try {
    for (let i = 0; i < settings.warmup + settings.responsesRounds; i++) {
      if (interrupted()) throw new Error('interrupted');
      const question = agent.questions[i % agent.questions.length]!;
      const kinds = [
        () =>
          streamExecution(url, headers, { prompt: { question }, classification: 'internal' }).then(
            (r) => r.ttftMs,
          ),
        () => streamResponse(stack, agent, question),
        () => socket.turn(requestOf(agent, question)),
      ];
      const round: number[] = [];
      for (let k = 0; k < kinds.length; k++) {
        const kind = (i + k) % kinds.length;
        round[kind] = await kinds[kind]!();
      }
      if (i >= settings.warmup) round.forEach((ms, kind) => samples[kind]!.push(ms));
    }
  } finally {
    socket.close();
  }
  const [execute, responses, websocket] = samples;
  return {
    rounds: execute.length,
    execute_ttft_ms: summarise(execute),
    responses_ttft_ms: summarise(responses),
    websocket_ttft_ms: summarise(websocket),
    paired_added_ms: summarise(responses.map((r, i) => r - execute[i]!)),
    websocket_vs_http_ms: summarise(websocket.map((w, i) => w - responses[i]!)),
  };
}

/** The figures of each mode; the WebSocket turn against the floor of `results` (eager for embedded). */
export function reportResponses(byMode: Record<string, ResponsesFigures>, results: Results): void {
  const figures: Figure[] = Object.entries(byMode).flatMap(([mode, f]) => {
    const direct = results.direct?.sequential.ttft_ms.p50 ?? NaN;
    const floor = results[mode === 'embedded' ? 'floor-eager' : 'floor']?.sequential.ttft_ms.p50 ?? NaN;
    return [
      { figure: `${mode}: execute TTFT p50`, value: f.execute_ttft_ms.p50, unit: 'ms' },
      { figure: `${mode}: /v1/responses TTFT p50`, value: f.responses_ttft_ms.p50, unit: 'ms' },
      {
        figure: `${mode}: added TTFT of /v1/responses, p50 − p50`,
        value: round(f.responses_ttft_ms.p50 - f.execute_ttft_ms.p50),
        unit: 'ms',
        target: { max: 2 },
      },
      {
        figure: `${mode}: added TTFT, median of the rounds' differences`,
        value: f.paired_added_ms.p50,
        unit: 'ms',
        target: { max: 2 },
      },
      {
        figure: `${mode}: added TTFT p95 − p95`,
        value: round(f.responses_ttft_ms.p95 - f.execute_ttft_ms.p95),
        unit: 'ms',
      },
      { figure: `${mode}: WebSocket turn TTFT p50`, value: f.websocket_ttft_ms.p50, unit: 'ms' },
      {
        figure: `${mode}: WebSocket turn's added TTFT p50 (− model direct), target the floor${mode === 'embedded' ? ' (eager)' : ''} ${round(floor)} + 10`,
        value: round(f.websocket_ttft_ms.p50 - direct),
        unit: 'ms',
        target: { max: round(floor + 10) },
      },
      {
        figure: `${mode}: WebSocket turn − HTTP /v1/responses, median of the rounds' differences`,
        value: f.websocket_vs_http_ms.p50,
        unit: 'ms',
      },
    ];
  });
  printTable(
    'POST /v1/responses and a WebSocket turn against POST /agents/{id}/execute, c=1, interleaved (issues 28, 34)',
    figures,
  );
  const file = writeResults('execution-responses', { date: new Date().toISOString(), modes: byMode });
  console.log(`written to ${file} (key execution-responses)`);
}
