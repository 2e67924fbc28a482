// A small HTTP client for tests: JSON in, status/headers/body out, NDJSON and SSE parsing.
export interface TestResponse<T = unknown> {
  status: number;
  headers: Headers;
  text: string;
  body: T;
}

export type Credentials = { id: string; secret: string };

export class Api {
  constructor(
    readonly baseUrl: string,
    readonly credentials?: Credentials,
  ) {}

  as(credentials: Credentials | undefined): Api {
    return new Api(this.baseUrl, credentials);
  }

  headers(extra: Record<string, string> = {}): Record<string, string> {
    return {
      ...(this.credentials
        ? { 'x-api-key': this.credentials.id, 'x-api-key-secret': this.credentials.secret }
        : {}),
      ...extra,
    };
  }

  async request<T = any>(
    method: string,
    path: string,
    body?: unknown,
    extraHeaders: Record<string, string> = {},
  ): Promise<TestResponse<T>> {
    const raw = typeof body === 'string';
    const res = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: this.headers({
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...extraHeaders,
      }),
      ...(body !== undefined ? { body: raw ? (body as string) : JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    let parsed: unknown = text;
    if ((res.headers.get('content-type') ?? '').includes('application/json') && text)
      parsed = JSON.parse(text);
    return { status: res.status, headers: res.headers, text, body: parsed as T };
  }

  get = <T = any>(path: string, headers?: Record<string, string>) =>
    this.request<T>('GET', path, undefined, headers);
  post = <T = any>(path: string, body?: unknown, headers?: Record<string, string>) =>
    this.request<T>('POST', path, body, headers);
  patch = <T = any>(path: string, body?: unknown) => this.request<T>('PATCH', path, body);
  put = <T = any>(path: string, body?: unknown) => this.request<T>('PUT', path, body);
  delete = <T = any>(path: string) => this.request<T>('DELETE', path);
}

export const parseNdjson = (text: string): any[] =>
  text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));

export interface SseMessage {
  id?: string;
  event?: string;
  data?: string;
  comment?: string;
}

export function parseSse(text: string): SseMessage[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const msg: SseMessage = {};
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) msg.comment = line.slice(1).trim();
        else {
          const i = line.indexOf(': ');
          const field = line.slice(0, i) as 'id' | 'event' | 'data';
          msg[field] = line.slice(i + 2);
        }
      }
      return msg;
    });
}

/** The answer a client reconstructs from events: text since the last reset. */
export function answerOf(events: { type: string; text?: string }[]): string {
  let text = '';
  for (const e of events) {
    if (e.type === 'reset') text = '';
    if (e.type === 'delta') text += e.text;
  }
  return text;
}
