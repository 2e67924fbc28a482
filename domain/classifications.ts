// Classification hierarchies (SPEC §4 CL-1) and reader classification sets (CL-2). Pure: the
// pipeline stores its levels, `buildClosure` turns them into "level → every level it grants",
// and `resolveReader` turns whatever a request sent as `classification` into the sorted list of
// levels the reader may see (an SQL predicate then enforces it, CL-3).
import { InvalidInput } from './errors';

export interface ClassificationLevel {
  name: string;
  includes?: string[];
}

/** Level → every level it grants, itself included, sorted. */
export type Closure = Record<string, string[]>;

const LEVEL_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;
const LEVEL_KEYS = new Set(['name', 'includes']);
const READER_KEYS = new Set(['name', 'exact']);

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const kindOf = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v);

/** Names are ASCII, so the default (UTF-16) sort is also a byte-wise and code-point sort. */
const sorted = (names: Iterable<string>): string[] => [...new Set(names)].sort();

function levelName(raw: unknown, where: string): string {
  if (typeof raw !== 'string') throw new InvalidInput(`${where} must be a string, not ${kindOf(raw)}`);
  if (!LEVEL_NAME.test(raw))
    throw new InvalidInput(
      `${where} "${raw}" is not a valid classification level name (1-64 characters: letters, digits, _ . : -, starting with a letter or digit)`,
    );
  return raw;
}

/** CL-1: validates the hierarchy and computes its transitive closure. */
export function buildClosure(levels: ClassificationLevel[]): Closure {
  if (!Array.isArray(levels) || levels.length === 0)
    throw new InvalidInput('classifications must be a non-empty list of levels');

  const includes = new Map<string, string[]>();
  levels.forEach((level: unknown, i) => {
    if (!isPlainObject(level))
      throw new InvalidInput(
        `classifications[${i}] must be an object {name, includes?}, not ${kindOf(level)}`,
      );
    const name = levelName(level.name, `classifications[${i}].name`);
    for (const key of Object.keys(level))
      if (!LEVEL_KEYS.has(key))
        throw new InvalidInput(`Classification level ${name}: unknown field "${key}"`);
    if (includes.has(name)) throw new InvalidInput(`Duplicate classification level: ${name}`);
    const raw = level.includes ?? [];
    if (!Array.isArray(raw))
      throw new InvalidInput(`Classification level ${name}: includes must be a list of level names`);
    includes.set(
      name,
      raw.map((inc, j) => levelName(inc, `Classification level ${name}: includes[${j}]`)),
    );
  });

  for (const [name, incs] of includes) {
    for (const inc of incs) {
      if (!includes.has(inc))
        throw new InvalidInput(`Classification level ${name} includes an undeclared level: ${inc}`);
      if (inc === name)
        throw new InvalidInput(`Classification cycle: ${name} → ${name} (a level may not include itself)`);
    }
  }

  // Depth-first search in declaration order; a back edge to a level on the stack is a cycle.
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];
  const visit = (name: string): void => {
    state.set(name, 'visiting');
    stack.push(name);
    for (const inc of includes.get(name) ?? []) {
      const s = state.get(inc);
      if (s === 'visiting') {
        const cycle = [...stack.slice(stack.indexOf(inc)), inc];
        throw new InvalidInput(`Classification cycle: ${cycle.join(' → ')}`);
      }
      if (s === undefined) visit(inc);
    }
    stack.pop();
    state.set(name, 'done');
  };
  for (const name of includes.keys()) if (!state.has(name)) visit(name);

  // Acyclic from here: memoised union of the included levels' closures.
  const closure: Closure = {};
  const grants = (name: string): string[] => {
    if (Object.hasOwn(closure, name)) return closure[name]!;
    const all = new Set([name]);
    for (const inc of includes.get(name) ?? []) for (const g of grants(inc)) all.add(g);
    return (closure[name] = sorted(all));
  };
  for (const name of includes.keys()) grants(name);
  return closure;
}

function resolveItem(item: unknown, closure: Closure, where: string): string[] {
  let name: unknown = item;
  let exact = false;
  if (isPlainObject(item)) {
    for (const key of Object.keys(item))
      if (!READER_KEYS.has(key))
        throw new InvalidInput(`${where}: unknown field "${key}" (allowed: name, exact)`);
    if (!('name' in item)) throw new InvalidInput(`${where}: name is required`);
    name = item.name;
    if (item.exact !== undefined) {
      if (typeof item.exact !== 'boolean')
        throw new InvalidInput(`${where}: exact must be true or false, not ${kindOf(item.exact)}`);
      exact = item.exact;
    }
    where = `${where}.name`;
  } else if (Array.isArray(item)) {
    throw new InvalidInput(`${where}: classification lists cannot be nested`);
  }
  if (typeof name !== 'string')
    throw new InvalidInput(
      `${where} must be a level name, an object {name, exact?} or a list of them, not ${kindOf(name)}`,
    );
  if (name === '') throw new InvalidInput(`${where} must not be empty`);
  if (!Object.hasOwn(closure, name)) throw new InvalidInput(`Unknown classification level: ${name}`);
  return exact ? [name] : closure[name]!;
}

/** CL-2: the sorted distinct levels a reader classification set grants. `[]` grants nothing. */
export function resolveReader(reader: unknown, closure: Closure): string[] {
  if (Array.isArray(reader))
    return sorted(reader.flatMap((item, i) => resolveItem(item, closure, `classification[${i}]`)));
  return sorted(resolveItem(reader, closure, 'classification'));
}
