// The streams floor's API (issue 35): a node:http server whose POST /chat {model, question}
// subscribes to a fresh channel, starts the floor's workflow on its task queue and writes every
// message of the channel as an NDJSON line until `done` or `error` (the lines Agentry's execute
// route writes, so one client reads both). No authentication, database or relay: what is left
// when a streamed chat is only Temporal, the model and pub/sub.
import type { Client } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { DONE, ERROR_PREFIX, type Bus } from './stream-floor-bus';
import { FLOOR_SETTINGS } from './stream-floor-settings';
import type { FloorChat } from './stream-floor-workflow';

export interface FloorApiOptions {
  bus: Bus;
  client: Client;
  taskQueue: string;
  /** Embedded: the client shares the worker's connection and asks for an eager start. */
  eager: boolean;
}

async function readJson(req: http.IncomingMessage): Promise<{ model?: string; question?: string }> {
  let body = '';
  for await (const chunk of req) body += chunk;
  return JSON.parse(body) as { model?: string; question?: string };
}

async function chat(options: FloorApiOptions, req: http.IncomingMessage, res: http.ServerResponse) {
  const { model, question } = await readJson(req);
  if (!model || !question) {
    res.writeHead(400).end('model and question required');
    return;
  }
  const id = `floor-chat-${randomUUID()}`;
  const input: FloorChat = {
    channel: id,
    model,
    question,
    maxAttempts: FLOOR_SETTINGS.activity.retry.maximumAttempts,
  };
  let unsubscribe: (() => Promise<void>) | undefined;
  const end = () => {
    res.end();
    void unsubscribe?.();
    unsubscribe = undefined;
  };
  // Subscribed before the start: no delta can go out before someone listens.
  unsubscribe = await options.bus.subscribe(id, (message) => {
    res.write(`${message}\n`);
    if (message === DONE || message.startsWith(ERROR_PREFIX)) end();
  });
  res.once('close', () => void unsubscribe?.());
  // A delta may be written before the start returns (in one process): the headers go with it.
  res.setHeader('content-type', 'application/x-ndjson');
  try {
    await options.client.workflow.start('floorChat', {
      taskQueue: options.taskQueue,
      workflowId: id,
      args: [input, FLOOR_SETTINGS.activity],
      ...(options.eager ? { requestEagerStart: true } : {}),
    });
  } catch (err) {
    await unsubscribe?.();
    if (!res.headersSent) res.writeHead(503);
    res.end((err as Error).message);
    return;
  }
  if (!res.headersSent) res.flushHeaders();
}

export function startFloorApi(options: FloorApiOptions): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    if (req.method === 'POST' && req.url === '/chat')
      chat(options, req, res).catch((err: Error) => {
        if (!res.headersSent) res.writeHead(500);
        res.end(err.message);
      });
    else res.writeHead(req.url === '/readyz' ? 200 : 404).end();
  });
  server.keepAliveTimeout = 65_000;
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}
