// Makes the JSON schemas that kubeconform validates the rendered chart against
// (scripts/check-chart.sh), offline, from files in Go modules (scripts/ensure-chart-tools.sh):
// the Kubernetes OpenAPI v2 document (k8s.io/kubernetes api/openapi-spec/swagger.json) and CRDs.
// One standalone file per kind and version, named as kubeconform looks them up
// (`{kind}-{group's first label}-{version}.json`, lower case; core kinds `{kind}-{version}.json`),
// made strict the way kubectl validates: an object schema that lists its properties refuses any
// other field (unless it says it preserves unknown fields). Two loosenings match what the API
// server accepts and what kubeconform's published schemas do: `null` is allowed wherever a value
// is (it means unset), and int-or-string fields and quantities take a number or a string.
//
// Usage: k8s-json-schemas <out dir> --openapi <swagger.json> [--crd <crd.yaml>]...
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

type Schema = { [key: string]: unknown };

const isObject = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

const NUMBER_OR_STRING = { oneOf: [{ type: ['string', 'null'] }, { type: ['number', 'null'] }] };
const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';

/** The strict, null-tolerant copy of one schema node and everything under it. */
export function strict(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(strict);
  if (!isObject(node)) return node;
  if (node['format'] === 'int-or-string') return NUMBER_OR_STRING;
  const out: Schema = {};
  for (const [key, value] of Object.entries(node)) {
    // `properties` and `definitions` are maps of names: their values are schemas, not the maps.
    out[key] =
      (key === 'properties' || key === 'definitions' || key === 'patternProperties') && isObject(value)
        ? Object.fromEntries(Object.entries(value).map(([name, s]) => [name, strict(s)]))
        : strict(value);
  }
  if (typeof out['type'] === 'string') out['type'] = [out['type'], 'null'];
  const open = node['x-kubernetes-preserve-unknown-fields'] === true;
  if (isObject(node['properties']) && !('additionalProperties' in node) && !open)
    out['additionalProperties'] = false;
  return out;
}

interface Gvk {
  group: string;
  version: string;
  kind: string;
}

/** kubeconform's file name for a kind (pkg/registry: kind, then the group's first label, then version). */
export function fileName({ group, version, kind }: Gvk): string {
  const groupPart = group === '' ? '' : `-${group.split('.')[0]}`;
  return `${kind}${groupPart}-${version}.json`.toLowerCase();
}

/** Every definition a schema reaches through `$ref`, by name. */
function reachable(root: unknown, definitions: Record<string, unknown>): Set<string> {
  const seen = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!isObject(node)) return;
    const ref = node['$ref'];
    if (typeof ref === 'string' && ref.startsWith('#/definitions/')) {
      const name = ref.slice('#/definitions/'.length);
      if (!seen.has(name)) {
        seen.add(name);
        visit(definitions[name]);
      }
    }
    Object.values(node).forEach(visit);
  };
  visit(root);
  return seen;
}

/** The Kubernetes kinds of an OpenAPI v2 document, each a standalone schema with its definitions. */
function fromOpenApi(file: string): Map<string, Schema> {
  const doc = JSON.parse(readFileSync(file, 'utf8')) as { definitions: Record<string, Schema> };
  const definitions: Record<string, unknown> = { ...doc.definitions, [QUANTITY]: NUMBER_OR_STRING };
  const out = new Map<string, Schema>();
  for (const [name, definition] of Object.entries(doc.definitions)) {
    const gvks = definition['x-kubernetes-group-version-kind'] as Gvk[] | undefined;
    // A List kind is never rendered; WatchEvent and DeleteOptions carry every group's GVK.
    if (!gvks || gvks.length !== 1 || name.endsWith('List')) continue;
    const used = [...reachable(definition, definitions)].sort();
    const schema = strict({
      ...definition,
      definitions: Object.fromEntries(used.map((n) => [n, definitions[n]])),
    }) as Schema;
    out.set(fileName(gvks[0]!), schema);
  }
  return out;
}

interface Crd {
  kind?: string;
  spec?: {
    group: string;
    names: { kind: string };
    versions: { name: string; schema?: { openAPIV3Schema?: Schema } }[];
  };
}

/** Each served version of each CRD in a YAML file. */
function fromCrd(file: string): Map<string, Schema> {
  const out = new Map<string, Schema>();
  for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
    const crd = doc.toJS() as Crd | null;
    if (crd?.kind !== 'CustomResourceDefinition' || !crd.spec) continue;
    const { group, names, versions } = crd.spec;
    for (const version of versions) {
      const schema = version.schema?.openAPIV3Schema;
      if (!schema) continue;
      out.set(fileName({ group, version: version.name, kind: names.kind }), strict(schema) as Schema);
    }
  }
  return out;
}

function main(argv: string[]): void {
  const [outDir, ...rest] = argv;
  if (!outDir) throw new Error('usage: k8s-json-schemas <out dir> --openapi <file> [--crd <file>]...');
  const schemas = new Map<string, Schema>();
  for (let i = 0; i < rest.length; i += 2) {
    const [flag, file] = [rest[i], rest[i + 1]];
    if (!file || (flag !== '--openapi' && flag !== '--crd')) throw new Error(`unexpected argument ${flag}`);
    for (const [name, schema] of flag === '--openapi' ? fromOpenApi(file) : fromCrd(file))
      schemas.set(name, schema);
  }
  mkdirSync(outDir, { recursive: true });
  for (const [name, schema] of schemas) writeFileSync(path.join(outDir, name), JSON.stringify(schema));
  console.error(`[chart-tools] ${schemas.size} schemas in ${outDir}`);
}

if (require.main === module) main(process.argv.slice(2));
