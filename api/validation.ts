// The single Ajv instance: strict JSON Schema validation of every request body. Schemas are
// `as const` objects that also appear, unchanged, in /openapi.json.
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { InvalidInput, type ErrorItem } from '../domain/errors';

// `verbose` gives errors their `parentSchema`, whose `description` words a `pattern` failure.
const ajv = new Ajv({ allErrors: true, strict: true, coerceTypes: false, useDefaults: false, verbose: true });
addFormats(ajv);

const compiled = new WeakMap<object, ValidateFunction>();

function pathOf(e: ErrorObject): string {
  const base = e.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, part) => (/^\d+$/.test(part) ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), '');
  if (e.keyword === 'additionalProperties') {
    const extra = (e.params as { additionalProperty: string }).additionalProperty;
    return base ? `${base}.${extra}` : extra;
  }
  if (e.keyword === 'required') {
    const missing = (e.params as { missingProperty: string }).missingProperty;
    return base ? `${base}.${missing}` : missing;
  }
  return base;
}

function messageOf(e: ErrorObject, path: string): string {
  const where = path || 'body';
  switch (e.keyword) {
    case 'additionalProperties':
      return `Unknown field: ${where}`;
    case 'required':
      return `Missing required field: ${where}`;
    case 'type':
      return `${where} must be ${(e.params as { type: string }).type}`;
    case 'pattern': {
      const description = (e.parentSchema as { description?: unknown } | undefined)?.description;
      return typeof description === 'string'
        ? `${where} must be ${description}`
        : `${where} ${e.message ?? 'is invalid'}`;
    }
    case 'enum':
      return `${where} must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return `${where} ${e.message ?? 'is invalid'}`;
  }
}

/**
 * JSON nesting a body may have. JSON.parse builds any depth, but the code that walks free-form
 * values (metadata schemas, filters, storage) recurses: 20 000 nested objects overflow its stack.
 */
export const MAX_BODY_DEPTH = 64;

/** Whether objects/arrays nest deeper than `limit` levels (iterative, so any depth is safe). */
function nestsDeeperThan(value: unknown, limit: number): boolean {
  const pending: [unknown, number][] = [[value, 1]];
  while (pending.length > 0) {
    const [node, depth] = pending.pop()!;
    if (depth > limit) return true;
    for (const child of Object.values(node as object))
      if (child !== null && typeof child === 'object') pending.push([child, depth + 1]);
  }
  return false;
}

/** Validates `body` against `schema`; a failure is a 400 naming every offending field. */
export function validate<T>(schema: object, body: unknown, what = 'Request body'): T {
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new InvalidInput(`${what} must be a JSON object (Content-Type: application/json)`);
  }
  if (nestsDeeperThan(body, MAX_BODY_DEPTH))
    throw new InvalidInput(`${what} nests deeper than ${MAX_BODY_DEPTH} levels`);
  let fn = compiled.get(schema);
  if (!fn) {
    fn = ajv.compile(schema);
    compiled.set(schema, fn);
  }
  if (fn(body)) return body as T;
  const seen = new Set<string>();
  const items: ErrorItem[] = [];
  const errors = fn.errors ?? [];
  // A union's branch of another type ("input must be string") says nothing once a branch of the
  // value's type failed deeper ("Missing required field: input[0].role").
  const deeper = (e: ErrorObject) => errors.some((o) => o.instancePath.startsWith(`${e.instancePath}/`));
  for (const e of errors) {
    // `oneOf`/`anyOf` parents repeat what their branches said.
    if (e.keyword === 'oneOf' || e.keyword === 'anyOf' || e.keyword === 'if') continue;
    if (e.keyword === 'type' && deeper(e)) continue;
    const path = pathOf(e);
    const message = messageOf(e, path);
    if (seen.has(message)) continue;
    seen.add(message);
    items.push({ type: e.keyword, path, message });
  }
  if (items.length === 0) items.push({ type: 'schema', path: '', message: `${what} is invalid` });
  throw new InvalidInput(items.map((i) => i.message).join('; '), items);
}
