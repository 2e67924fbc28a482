// The placeholders of an agent (SPEC §8.2 AG-5..AG-8, SR-2): names, types, targets and the
// retrieval params with their ranges and defaults (the quirk: a field omitted inside `params` is
// 0). Problems are collected, not thrown (agent-rules.ts throws them together).
import {
  DEFAULT_PARAMS,
  type AgentLimits,
  type MmrParams,
  type Placeholder,
  type SimilarityParams,
} from './agent-definition';
import { PLACEHOLDER_NAME } from './template';
import { has, isObject, type Problems } from './validation-problems';

const RETRIEVAL_TYPES: readonly string[] = ['similarity', 'mmr'];

/** AG-8 with the SR-2 ranges; `label` is `Placeholder <name>`. */
function parseParams(
  type: 'similarity' | 'mmr',
  raw: unknown,
  path: string,
  label: string,
  limits: AgentLimits,
  p: Problems,
): SimilarityParams | MmrParams {
  if (raw === undefined) return { ...DEFAULT_PARAMS[type] };
  if (!isObject(raw)) {
    p.add('invalid_type', path, `${label}: params must be an object`);
    return { ...DEFAULT_PARAMS[type] };
  }
  const fields = type === 'mmr' ? ['k', 'fetch_k', 'lambda_mult', 'threshold'] : ['k', 'threshold'];
  for (const key of Object.keys(raw))
    if (!fields.includes(key))
      p.add('invalid_param', `${path}.${key}`, `${label}: ${key} is not a parameter of ${type} placeholders`);
  const num = (key: string, integer: boolean, min: number, max: number): number => {
    const v = raw[key] ?? 0; // the quirk: a field omitted inside params is 0
    const at = `${path}.${key}`;
    if (typeof v !== 'number' || !Number.isFinite(v) || (integer && !Number.isInteger(v)))
      p.add('invalid_type', at, `${label}: ${key} must be ${integer ? 'an integer' : 'a number'}`);
    else if (v < min) p.add('out_of_range', at, `${label}: ${key} must be at least ${min}`);
    else if (v > max) p.add('out_of_range', at, `${label}: ${key} must be at most ${max}`);
    return v as number;
  };
  const k = num('k', true, 1, limits.k);
  const threshold = raw.threshold ?? null;
  if (threshold !== null && (typeof threshold !== 'number' || !Number.isFinite(threshold) || threshold < 0))
    p.add('invalid_param', `${path}.threshold`, `${label}: threshold must be null or a number at least 0`);
  if (type === 'similarity') return { k, threshold: threshold as number | null };
  const fetch_k = num('fetch_k', true, 0, 1000);
  const lambda_mult = num('lambda_mult', false, 0, 1);
  return { k, fetch_k, lambda_mult, threshold: threshold as number | null };
}

export function parsePlaceholders(raw: unknown, limits: AgentLimits, p: Problems): Placeholder[] {
  if (!Array.isArray(raw)) {
    p.add('invalid_type', 'placeholders', 'placeholders must be an array');
    return [];
  }
  if (raw.length > limits.agentPlaceholders)
    p.add(
      'limit_exceeded',
      'placeholders',
      `placeholders has ${raw.length} entries; the limit is ${limits.agentPlaceholders}`,
    );
  const queryNames = new Set(
    raw.flatMap((o: unknown) =>
      isObject(o) && o.type === 'query' && typeof o.name === 'string' ? [o.name] : [],
    ),
  );
  const seen = new Set<string>();
  const result: Placeholder[] = [];
  raw.forEach((o: unknown, i) => {
    const path = `placeholders[${i}]`;
    if (!isObject(o)) return p.add('invalid_type', path, `${path} must be an object`);
    const { name, type, target } = o;
    const label = typeof name === 'string' ? `Placeholder ${name}` : path;
    if (typeof name !== 'string') p.add('invalid_type', `${path}.name`, `${path}.name must be a string`);
    else if (!PLACEHOLDER_NAME.test(name))
      p.add('invalid_placeholder_name', `${path}.name`, `${label}: name must match ^[A-Za-z][A-Za-z0-9]*$`);
    else if (seen.has(name))
      p.add('duplicate_placeholder', `${path}.name`, `Duplicate placeholder name: ${name}`);
    if (typeof name === 'string') seen.add(name);
    if (type === 'query') {
      p.unknownFields(o, ['name', 'type', 'target', 'params'], path, label);
      for (const key of ['target', 'params'])
        if (has(o, key))
          p.add('invalid_field', `${path}.${key}`, `${label}: a query placeholder takes no ${key}`);
      result.push({ name: String(name), type });
      return;
    }
    if (type === 'full_text' || type === 'hybrid')
      return p.add(
        'invalid_placeholder_type',
        `${path}.type`,
        `${label}: ${type} is not available as placeholders`,
      );
    if (typeof type !== 'string' || !RETRIEVAL_TYPES.includes(type))
      return p.add(
        'invalid_placeholder_type',
        `${path}.type`,
        `${label}: type must be query, similarity or mmr`,
      );
    const retrieval = type as 'similarity' | 'mmr';
    p.unknownFields(o, ['name', 'type', 'target', 'params'], path, label);
    if (target === undefined) p.add('missing_target', `${path}.target`, `${label}: target is required`);
    else if (typeof target !== 'string')
      p.add('invalid_type', `${path}.target`, `${label}: target must be a string`);
    else if (!queryNames.has(target))
      p.add('invalid_target', `${path}.target`, `${label}: target ${target} must name a query placeholder`);
    const params = parseParams(retrieval, o.params, `${path}.params`, label, limits, p);
    result.push({ name: String(name), type: retrieval, target: String(target), params } as Placeholder);
  });
  return result;
}
