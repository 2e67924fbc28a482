// MD-1: a pipeline's metadata JSON Schema. `$`-keywords ($ref, $defs, $id...) are refused, so a
// schema can reach nothing outside itself; documents are validated against the compiled schema.
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { InvalidInput, type ErrorItem } from '../domain/errors';

// A separate instance from the request validator: user schemas, cached per pipeline revision.
const ajv = new Ajv({ allErrors: true, strict: false, validateSchema: true });
addFormats(ajv);
const compiled = new Map<string, ValidateFunction>();

function dollarKeys(value: unknown, path: string, out: string[]): void {
  if (Array.isArray(value)) value.forEach((v, i) => dollarKeys(v, `${path}[${i}]`, out));
  else if (value && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      const here = path ? `${path}.${key}` : key;
      if (key.startsWith('$')) out.push(here);
      dollarKeys(v, here, out);
    }
  }
}

/** Refuses `$`-keywords and schemas Ajv cannot compile (400 naming the problem). */
export function checkMetadataSchema(schema: Record<string, unknown>): void {
  const found: string[] = [];
  dollarKeys(schema, '', found);
  if (found.length > 0)
    throw new InvalidInput(`metadata_schema must not use $-keywords: ${found.join(', ')}`);
  try {
    ajv.compile(schema);
  } catch (err) {
    throw new InvalidInput(`metadata_schema is not a valid JSON Schema: ${(err as Error).message}`);
  }
}

/** MD-1: metadata failing the pipeline's schema → 400 with the Ajv errors. */
export function validateMetadata(
  cacheKey: string,
  schema: Record<string, unknown>,
  metadata: unknown,
  path = 'metadata',
): void {
  let fn = compiled.get(cacheKey);
  if (!fn) {
    fn = ajv.compile(schema);
    if (compiled.size > 1000) compiled.clear();
    compiled.set(cacheKey, fn);
  }
  if (fn(metadata)) return;
  const items: ErrorItem[] = (fn.errors ?? []).map((e) => ({
    type: e.keyword,
    path: `${path}${e.instancePath.replace(/\//g, '.')}`,
    message: `${path}${e.instancePath.replace(/\//g, '.')} ${e.message ?? 'is invalid'}`,
  }));
  throw new InvalidInput(
    `Metadata does not match the pipeline's metadata_schema: ${items.map((i) => i.message).join('; ')}`,
    items,
  );
}
