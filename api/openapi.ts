// /openapi.json (OpenAPI 3.1), generated from the route declarations and the same JSON Schemas
// that validate requests.
import type { RouteSpec } from './route-registry';
import { errorBodySchema } from './schemas/common';

const REASONS: Record<number, string> = {
  400: 'Invalid input (names what is wrong)',
  401: 'Invalid API key (errors[] names a missing key header)',
  403: 'The key lacks a permission on an existing object',
  404: 'Unknown object',
  409: 'Name or state conflict',
  413: 'Body too large',
  429: 'Rate limited',
  502: 'The model or embedding server failed',
  503: 'A dependency is unavailable (Retry-After)',
};

/** Express parameters (`:id`) become `{id}`; an escaped colon (`documents\\:batch`) is literal. */
const PARAM = /(?<!\\):([A-Za-z_]+)/g;
const toOpenApiPath = (path: string): string => path.replace(PARAM, '{$1}').replace(/\\:/g, ':');

export function buildOpenApi(specs: readonly RouteSpec[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const spec of specs) {
    const path = toOpenApiPath(spec.path);
    const params = [...spec.path.matchAll(PARAM)].map((m) => ({
      name: m[1],
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    const optional = (where: 'query' | 'header', list: { name: string; description: string }[] = []) =>
      list.map((p) => ({
        name: p.name,
        in: where,
        required: false,
        description: p.description,
        schema: { type: 'string' },
      }));
    const query = optional('query', spec.query);
    const headers = optional('header', spec.headers);
    const successContent =
      spec.success.status === 204
        ? undefined
        : Object.fromEntries(
            (spec.success.contentTypes ?? ['application/json']).map((type) => [
              type,
              spec.success.schema ? { schema: spec.success.schema } : {},
            ]),
          );
    const responses: Record<string, unknown> = {
      [spec.success.status]: {
        description: spec.success.description,
        ...(successContent ? { content: successContent } : {}),
      },
    };
    for (const status of spec.errors ?? []) {
      responses[status] = {
        description: REASONS[status] ?? 'Error',
        content: { 'application/json': { schema: spec.errorBody ?? errorBodySchema } },
      };
    }
    (paths[path] ??= {})[spec.method] = {
      summary: spec.summary,
      tags: [spec.tag],
      ...(spec.permission ? { description: `Permission: \`${spec.permission}\`` } : {}),
      parameters: [...params, ...query, ...headers],
      ...(spec.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: spec.body } } } }
        : {}),
      responses,
      ...(spec.auth === false ? { security: [] } : {}),
      ...(spec.bearer ? { security: [{ bearer: [] }, { apiKeyId: [], apiKeySecret: [] }] } : {}),
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Agentry',
      version,
      description:
        'Retrieval-augmented agents with durable execution. Authenticate with x-api-key and x-api-key-secret ' +
        '(the OpenAI-compatible routes under /v1 also with Authorization: Bearer <key id>.<secret>).',
    },
    components: {
      securitySchemes: {
        apiKeyId: { type: 'apiKey', in: 'header', name: 'x-api-key' },
        apiKeySecret: { type: 'apiKey', in: 'header', name: 'x-api-key-secret' },
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description:
            '`<key id>.<secret>`: the OpenAI-compatible routes (/v1/...) take the key as the SDKs send it',
        },
      },
    },
    security: [{ apiKeyId: [], apiKeySecret: [] }],
    paths,
  };
}
