// A plain WebSocket client of /v1/responses (the `ws` package), read as the Open Responses
// compliance suite reads one: a turn ends on its first message that is a terminal response event
// or carries an error code. Every message is kept, in arrival order, so a test sees what arrived
// between two turns too.
import WebSocket from 'ws';

/** A server message, parsed. */
export type Message = Record<string, any> & { type: string };

export interface Session {
  ws: WebSocket;
  /** Every message received so far. */
  messages: Message[];
  /** The next message not yet taken by `next` or `turn`. */
  next(timeoutMs?: number): Promise<Message>;
  /** Sends a `response.create` (or raw text) and takes the messages up to the turn's end. */
  turn(event: object | string, timeoutMs?: number): Promise<Message[]>;
  send(event: object | string): void;
  closed: Promise<{ code: number; reason: string }>;
}

export const isTurnEnd = (m: Message): boolean =>
  ['response.completed', 'response.failed', 'response.incomplete'].includes(m.type) ||
  m.type === 'error' ||
  typeof m.error?.code === 'string';

/** Opens a socket; rejects with the HTTP status and body when the server refuses the upgrade. */
export function openSession(
  url: string,
  headers: Record<string, string> = {},
  options: WebSocket.ClientOptions = {},
): Promise<Session> {
  const ws = new WebSocket(url, { headers, ...options });
  const messages: Message[] = [];
  let taken = 0;
  let wake: (() => void) | undefined;
  // Errors after the handshake end in `close`, which the session reports.
  ws.on('error', () => undefined);
  ws.on('message', (data) => {
    messages.push(JSON.parse(String(data)) as Message);
    wake?.();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => {
      resolve({ code, reason: String(reason) });
      wake?.();
    }),
  );
  const next = async (timeoutMs = 20_000): Promise<Message> => {
    const deadline = Date.now() + timeoutMs;
    while (taken >= messages.length) {
      if (ws.readyState === WebSocket.CLOSED) throw new Error('the socket closed');
      if (Date.now() > deadline) throw new Error(`no message within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 50);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    return messages[taken++]!;
  };
  const send = (event: object | string) => ws.send(typeof event === 'string' ? event : JSON.stringify(event));
  const session: Session = {
    ws,
    messages,
    next,
    send,
    closed,
    async turn(event, timeoutMs) {
      send(event);
      const turn: Message[] = [];
      for (;;) {
        const m = await next(timeoutMs);
        turn.push(m);
        if (isTurnEnd(m)) return turn;
      }
    },
  };
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(session));
    ws.once('unexpected-response', (req, res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += String(chunk)));
      res.on('end', () => {
        req.destroy();
        reject(
          Object.assign(new Error(`upgrade refused: ${res.statusCode}`), {
            status: res.statusCode,
            headers: res.headers,
            body: JSON.parse(body || 'null') as unknown,
          }),
        );
      });
    });
    ws.once('error', reject);
  });
}
