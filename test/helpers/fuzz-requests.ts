// Requests for the bad-input fuzz test, generated per route of /openapi.json: path ids (existing,
// absent, malformed), list query strings, headers, credentials, content types and encodings, and
// the bodies of fuzz-bodies.ts. A request is plain data (shrinkable, printable); `toFetch` turns
// it into what is sent.
import fc from 'fast-check';
import { gzipSync } from 'node:zlib';
import {
  fromSchema,
  mutate,
  mutation,
  nastyValue,
  notJson,
  renderJson,
  type Json,
  type SchemaContext,
} from './fuzz-bodies';

export interface FuzzRoute {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** OpenAPI form: `/pipelines/{id}/documents/{docId}`. */
  path: string;
  auth: boolean;
  body?: object;
  /** Scalar fields of the listed object, for list routes (SPEC §1 list conventions). */
  listFields?: string[];
  /**
   * Error shape family: foundation4 `{detail}`, seed 002 `/api/...` `{success: false, error}`, or
   * the OpenAI-compatible `/v1/...` `{error: {message, type, param, code}}` (issue 28).
   */
  family: 'foundation4' | 'api' | 'openai';
  /** Sent `Authorization: Bearer <id>.<secret>`: the codec server (DX-6), the `/v1/...` routes. */
  bearer?: boolean;
}

export type Credentials = 'admin' | 'limited' | 'wrong-secret' | 'none' | 'malformed-id' | 'unknown-id';

/** How the server's JSON parser sees a content type: parses it, ignores it, or it depends. */
type Parses = 'yes' | 'no' | 'unsure';

export interface FuzzRequest {
  method: string;
  url: string;
  credentials: Credentials;
  headers: Record<string, string>;
  contentType?: string;
  /** `gzip` = the body is really gzip-compressed; other values are sent over an uncompressed body. */
  contentEncoding?: string;
  body?: { json: Json } | { text: string };
  parses: Parses;
  /** Whether the last path id names an existing object (DELETE with the admin key never does). */
  lastIdExists: boolean;
}

export interface FuzzContext {
  /** Path segment (`llms`, `documents`, `versions`...) → values naming existing objects. */
  pools: Map<string, string[]>;
  /** Every existing id (lower case), to keep the admin key from deleting the fixtures. */
  existing: Set<string>;
  schema: SchemaContext;
  /** Known-valid bodies per route key (`POST /agents/{id}/execute`), mutated like schema bodies. */
  seedBodies: Map<string, Json[]>;
  headerIds: { pipeline: string[]; llm: string[] };
}

export const routeKey = (r: { method: string; path: string }): string => `${r.method} ${r.path}`;
export const ABSENT_ID = '01890a5d-ac96-774b-bcce-b302099a8057';

const printable = (max: number) =>
  fc.string({
    unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
    maxLength: max,
  });
/** Header values may carry latin-1 bytes, but no DEL and no C1 controls (fetch refuses them). */
const latin1 = fc.string({
  unit: fc
    .oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0xa0, max: 0xff }))
    .map((c) => String.fromCharCode(c)),
  maxLength: 30,
});

const garbageId = fc.oneof(
  fc.constantFrom(
    'not-a-uuid',
    '123',
    '00000000-0000-0000-0000-000000000000',
    'ffffffff-ffff-ffff-ffff-ffffffffffff',
    `${ABSENT_ID}0`,
    ABSENT_ID.replace(/-/g, ''),
    `{${ABSENT_ID}}`,
    'null',
    'undefined',
    '__proto__',
    'constructor',
    '.',
    ' ',
    '\u0000',
    'é',
    '😀'.repeat(50),
    "' or 1=1 --",
    'a'.repeat(3000),
  ),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
);
/** Percent sequences the router must decode (or refuse) itself. */
const rawId = fc.constantFrom('%E0%A4%A', '%', '%zz', '%00', '%2F', '%2e%2e', '%C0%AF', '%ED%A0%80');

interface ParamValue {
  value: string;
  raw: boolean;
}

function paramArb(segment: string, ctx: FuzzContext): fc.Arbitrary<ParamValue> {
  const own = ctx.pools.get(segment) ?? [];
  const others = [...ctx.pools.entries()].filter(([k]) => k !== segment).flatMap(([, v]) => v);
  const plain = (a: fc.Arbitrary<string>) => a.map((value) => ({ value, raw: false }));
  const choices: fc.WeightedArbitrary<ParamValue>[] = [
    { weight: 2, arbitrary: plain(fc.uuid()) },
    { weight: 2, arbitrary: plain(garbageId) },
    { weight: 1, arbitrary: rawId.map((value) => ({ value, raw: true })) },
    { weight: 1, arbitrary: plain(fc.constantFrom('0', '-1', '1e3', '01', '99999999999', '1.5')) },
  ];
  if (own.length > 0) {
    choices.push({ weight: 10, arbitrary: plain(fc.constantFrom(...own)) });
    choices.push({ weight: 1, arbitrary: plain(fc.constantFrom(...own).map((v) => v.toUpperCase())) });
  }
  if (others.length > 0) choices.push({ weight: 1, arbitrary: plain(fc.constantFrom(...others)) });
  return fc.oneof(...choices);
}

const LIMITS = [
  '0',
  '-1',
  '101',
  '100',
  '1',
  '1e2',
  'abc',
  '',
  ' 5',
  '٣',
  '99999999999999999999',
  '1.5',
  '0x10',
];
const ORDERS = [
  '-created_at',
  'name,-id',
  'id,id',
  ',',
  '-',
  '--name',
  'nope',
  'created_at,',
  '-updated_at,name',
];
const OPS = ['contains', 'startswith', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'eq', 'regex', '', 'GT'];
const VALUES = [
  '2024-01-01',
  '2024-13-45T99:99',
  'notadate',
  'true',
  'maybe',
  '1,2,,3',
  ABSENT_ID,
  '',
  '%00',
  '\u0000',
  'a\u0000b',
  '😀',
  "'",
  '%',
  '1e400',
  '-0',
];
const cursor = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
const CURSORS = [
  'x',
  '!!!',
  cursor({ o: 'created_at,id', v: [1, 2] }),
  cursor({ o: 'created_at,id', v: ['2024-01-01T00:00:00.000Z', 'not-a-uuid'] }),
  cursor({ o: 'created_at,id', v: ['2024-01-01T00:00:00.000Z', ABSENT_ID] }),
  cursor({ o: '-name,id', v: [null, ABSENT_ID] }),
  cursor({ o: 'created_at,id' }),
  cursor(null),
  cursor([]),
  cursor('text'),
];

function queryArb(route: FuzzRoute): fc.Arbitrary<[string, string][]> {
  const fields = route.listFields ?? [];
  const keys = fc.oneof(
    fc.constantFrom(
      'limit',
      'after',
      'before',
      'order',
      'format',
      'after',
      '__proto__',
      'constructor',
      'a[b]',
    ),
    ...(fields.length > 0
      ? [
          fc.constantFrom(...fields),
          fc.tuple(fc.constantFrom(...fields), fc.constantFrom(...OPS)).map(([f, o]) => `${f}$${o}`),
        ]
      : []),
    fc.string({ maxLength: 12 }),
  );
  const values = fc.oneof(
    fc.constantFrom(...LIMITS, ...ORDERS, ...VALUES, ...CURSORS),
    fields.length > 0 ? fc.constantFrom(...fields) : fc.constant('name'),
    fc.string({ maxLength: 20 }),
    fc.base64String({ maxLength: 40 }),
  );
  const pairs = fc.array(fc.tuple(keys, values), { maxLength: 4 });
  return route.listFields
    ? pairs
    : fc.oneof({ weight: 4, arbitrary: fc.constant<[string, string][]>([]) }, pairs);
}

function headersArb(route: FuzzRoute, ctx: FuzzContext): fc.Arbitrary<Record<string, string>> {
  const id = (good: string[]) =>
    fc.oneof(
      ...(good.length > 0 ? [{ weight: 6, arbitrary: fc.constantFrom(...good) }] : []),
      { weight: 1, arbitrary: fc.uuid() },
      { weight: 1, arbitrary: printable(60) },
    );
  const execute = /\/(execute|search|query)$/.test(route.path);
  const optional = (arb: fc.Arbitrary<string>, always: boolean) =>
    always ? fc.option(arb, { freq: 8, nil: undefined }) : fc.option(arb, { freq: 1, nil: undefined });
  return (
    fc
      .record({
        'x-pipeline-id': optional(id(ctx.headerIds.pipeline), execute),
        'x-llm-id': optional(id(ctx.headerIds.llm), execute),
        'idempotency-key': fc.option(fc.oneof(printable(300), latin1), { freq: 5, nil: undefined }),
        'last-event-id': fc.option(fc.oneof(fc.nat().map(String), printable(30)), {
          freq: 5,
          nil: undefined,
        }),
        accept: fc.option(
          fc.oneof(
            fc.constantFrom(
              'application/json',
              'text/event-stream',
              'application/x-ndjson',
              'text/plain',
              '*/*',
              'text/html',
            ),
            printable(40),
          ),
          { freq: 3, nil: undefined },
        ),
        'x-request-id': fc.option(fc.oneof(printable(140), latin1), { freq: 5, nil: undefined }),
      })
      // fetch refuses empty header values; an empty header is the same as none on the wire anyway.
      .map(
        (h) =>
          Object.fromEntries(
            Object.entries(h).filter(([, v]) => v !== undefined && v.trim() !== ''),
          ) as Record<string, string>,
      )
  );
}

const credentialsArb: fc.Arbitrary<Credentials> = fc.oneof(
  { weight: 40, arbitrary: fc.constant('admin' as const) },
  { weight: 4, arbitrary: fc.constant('limited' as const) },
  {
    weight: 1,
    arbitrary: fc.constantFrom<Credentials>('wrong-secret', 'none', 'malformed-id', 'unknown-id'),
  },
);

const CONTENT_TYPES: [string | undefined, Parses, number][] = [
  ['application/json', 'yes', 60],
  ['application/json; charset=utf-8', 'yes', 3],
  ['Application/JSON', 'yes', 2],
  ['text/plain', 'no', 2],
  ['application/x-www-form-urlencoded', 'no', 2],
  ['multipart/form-data; boundary=x', 'no', 1],
  ['application/merge-patch+json', 'no', 1],
  [undefined, 'no', 2],
  ['application/json; charset=latin1', 'no', 1],
  ['application/json; charset=utf-16', 'unsure', 1],
  ['application/json;;', 'unsure', 1],
  ['*/*', 'unsure', 1],
];
const contentTypeArb = fc.oneof(
  ...CONTENT_TYPES.map(([type, parses, weight]) => ({ weight, arbitrary: fc.constant({ type, parses }) })),
);
const encodingArb = fc.oneof(
  { weight: 30, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.constantFrom('gzip', 'gzip-invalid', 'deflate', 'br', 'x-unknown', 'identity') },
);

type BodyChoice = { json: Json } | { text: string } | undefined;

function bodyArb(route: FuzzRoute, ctx: FuzzContext): fc.Arbitrary<BodyChoice> {
  if (route.method === 'GET') return fc.constant(undefined);
  const seeds = ctx.seedBodies.get(routeKey(route)) ?? [];
  const base: fc.Arbitrary<Json> = route.body
    ? fc.oneof(fromSchema(route.body, ctx.schema), ...(seeds.length > 0 ? [fc.constantFrom(...seeds)] : []))
    : fc.constant({});
  const json = (a: fc.Arbitrary<Json>) => a.map((v): BodyChoice => ({ json: v }));
  const weight = route.body ? 1 : 0;
  return fc.oneof(
    { weight: 2 * weight, arbitrary: json(base) },
    {
      weight: 10 * weight,
      arbitrary: json(
        fc.tuple(base, fc.array(mutation, { minLength: 1, maxLength: 3 })).map(([b, m]) => mutate(b, m)),
      ),
    },
    {
      weight: 2 * weight,
      arbitrary: base.chain((b) => notJson(renderJson(b))).map((text): BodyChoice => ({ text })),
    },
    {
      weight: 1 * weight,
      arbitrary: json(
        base.map((b) => ({ ...(b as object), padding: { __fuzzRaw__: 'huge:1100000' } }) as Json),
      ),
    },
    { weight: 1, arbitrary: json(fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>) },
    { weight: 1, arbitrary: json(nastyValue) },
    { weight: route.body ? 1 : 6, arbitrary: fc.constant(undefined) },
  );
}

/** Every request one route can receive. */
export function requestArb(route: FuzzRoute, ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  const segments = route.path.split('/');
  const params = segments
    .map((s, i) => (/^\{.+\}$/.test(s) ? paramArb(segments[i - 1] ?? '', ctx) : null))
    .filter((a): a is fc.Arbitrary<ParamValue> => a !== null);
  return fc
    .record({
      params: fc.tuple(...params),
      query: queryArb(route),
      headers: headersArb(route, ctx),
      credentials: credentialsArb,
      body: bodyArb(route, ctx),
      contentType: contentTypeArb,
      encoding: encodingArb,
    })
    .map(({ params: values, query, headers, credentials, body, contentType, encoding }) => {
      const last = values[values.length - 1];
      const lastIdExists =
        last !== undefined && ctx.existing.has(decodeURIComponentSafe(last.value).toLowerCase());
      // The admin key must not delete the fixtures every other request relies on.
      if (route.method === 'DELETE' && credentials === 'admin' && lastIdExists)
        values = [...values.slice(0, -1), { value: ABSENT_ID, raw: false }];
      let i = 0;
      const path = segments
        .map((s) => {
          if (!/^\{.+\}$/.test(s)) return s;
          const v = values[i++]!;
          return v.raw ? v.value : encodeURIComponent(v.value);
        })
        .join('/');
      const qs = query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
      const hasBody = body !== undefined;
      return {
        method: route.method,
        url: qs ? `${path}?${qs}` : path,
        credentials,
        headers,
        ...(hasBody && contentType.type ? { contentType: contentType.type } : {}),
        ...(hasBody && encoding ? { contentEncoding: encoding } : {}),
        ...(hasBody ? { body } : {}),
        parses: !hasBody
          ? 'no'
          : encoding && encoding !== 'gzip' && encoding !== 'identity'
            ? 'no'
            : contentType.parses,
        lastIdExists: route.method === 'DELETE' && credentials === 'admin' ? false : lastIdExists,
      };
    });
}

function decodeURIComponentSafe(v: string): string {
  try {
    return decodeURIComponent(v);
  } catch {
    return v;
  }
}

/** The body text as sent (raw markers expanded); undefined without a body. */
export const bodyText = (req: FuzzRequest): string | undefined =>
  req.body === undefined ? undefined : 'json' in req.body ? renderJson(req.body.json) : req.body.text;

/** Headers and bytes as sent. */
export function toFetch(
  req: FuzzRequest,
  auth: Record<string, string>,
): { headers: Record<string, string>; body?: Buffer } {
  const text = bodyText(req);
  const headers: Record<string, string> = { ...auth, ...req.headers };
  if (req.contentType) headers['content-type'] = req.contentType;
  if (req.contentEncoding)
    headers['content-encoding'] = req.contentEncoding === 'gzip-invalid' ? 'gzip' : req.contentEncoding;
  if (text === undefined) return { headers };
  const bytes = Buffer.from(text, 'utf8');
  return { headers, body: req.contentEncoding === 'gzip' ? gzipSync(bytes) : bytes };
}

/** A short, readable form of a request for failure reports. */
export function describeRequest(req: FuzzRequest): string {
  const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}… (${s.length} chars)` : s);
  const body =
    req.body === undefined
      ? '(none)'
      : 'json' in req.body
        ? JSON.stringify(req.body.json)
        : JSON.stringify(req.body.text);
  return [
    `${req.method} ${clip(req.url, 300)}`,
    `credentials: ${req.credentials}`,
    `headers: ${clip(JSON.stringify(req.headers), 600)}`,
    `content-type: ${req.contentType ?? '(none)'}${req.contentEncoding ? `, content-encoding: ${req.contentEncoding}` : ''}`,
    `body: ${clip(body, 1200)}`,
  ].join('\n    ');
}
