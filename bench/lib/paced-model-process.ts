// The paced fake model in a process of its own (bench/lib/paced-model.ts starts it with fork):
// test/fakes/fake-model-server.ts, whose deltas each model's script paces, plus the wall-clock
// time at which each `response.output_text.delta` event was written, keyed by the answer's second
// delta (the streams benchmark makes it unique per request). The fake is used as it is: the
// emission times come from its responses' writes, seen through ServerResponse.prototype.write in
// this process only. Its server keeps idle connections 65 s (Node's default is 5 s): a client
// starved of CPU for seconds otherwise reuses a connection the server just closed and reads a
// "Connection error" that no model gave (32 of 916 S1 answers on a machine at load 14). IPC: {script: {model, deltaDelayMs}} and {take: true} (answers the emission
// times recorded since the last take, and the number of model requests).
import http, { ServerResponse } from 'node:http';
import { startFakeModelServer } from '../../test/fakes/fake-model-server';
import { nowMs } from './env';

export type ModelIpc =
  { id: number; script: { model: string; deltaDelayMs: number } } | { id: number; take: true };

const DELTA = 'event: response.output_text.delta\n';

/** Per response in flight: its delta times so far, and its key once its second delta is out. */
const open = new WeakMap<ServerResponse, { key: string | null; times: number[] }>();
let emissions: Record<string, number[]> = {};

const write = ServerResponse.prototype.write;
ServerResponse.prototype.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
  if (typeof chunk === 'string' && chunk.startsWith(DELTA)) {
    const at = nowMs();
    let entry = open.get(this);
    if (!entry) open.set(this, (entry = { key: null, times: [] }));
    entry.times.push(at);
    if (entry.times.length === 2) {
      const data = JSON.parse(chunk.slice(chunk.indexOf('data: ') + 6)) as { delta: string };
      entry.key = data.delta.trim();
      emissions[entry.key] = entry.times;
    }
  }
  return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
} as typeof ServerResponse.prototype.write;

const createServer = http.createServer;
http.createServer = ((...args: Parameters<typeof createServer>) => {
  const server = createServer(...args);
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  return server;
}) as typeof createServer;

async function main(): Promise<void> {
  const fake = await startFakeModelServer();
  const send = (message: unknown) => process.send?.(message);
  process.on('message', (message: ModelIpc) => {
    if ('script' in message) {
      fake.script(message.script.model, { deltaDelayMs: message.script.deltaDelayMs });
      send({ id: message.id, ok: true });
    } else {
      const taken = emissions;
      emissions = {};
      const requests = fake.requests.length;
      fake.requests.length = 0; // the fake keeps every request body: keep its memory flat
      send({ id: message.id, emissions: taken, requests });
    }
  });
  process.on('disconnect', () => void fake.close().then(() => process.exit(0)));
  send({ ready: fake.url });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
