// DESIGN §2 as a lint rule: which room of the house may import which. The table below is the only
// place the directions are written; `importDirections()` turns it into one core
// `no-restricted-imports` entry per product folder, naming every project path that folder may not
// reach (computed from the tree, so a new file or folder is covered without editing this file).
// Test, bench and script code may import anything and is not listed. Only static imports and
// re-exports are checked: product code has no `require()` or `import()` of its own modules.
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * Rooms (a folder, or a root file without `.ts`) and what each may import besides itself.
 * `types`: `import type` only. A more specific room (workflows/contracts) overrides its parent.
 */
const HOUSE = {
  domain: { may: [] },
  infra: { may: ['domain'] },
  db: { may: ['domain', 'infra'] },
  // What the API and the activities share: search, retrieval, query embeddings, prompt planning,
  // the stored answer.
  services: { may: ['domain', 'infra', 'db', 'workflows/contracts'] },
  // What the worker registers, and the pieces only they use.
  activities: { may: ['domain', 'infra', 'db', 'services', 'workflows/contracts'] },
  // The deterministic sandbox: its own folder, activity and domain types (docs/decisions.md).
  workflows: {
    may: [],
    types: ['activities', 'domain'],
    packages: ['@temporalio/workflow', '@temporalio/common'],
  },
  // Shared by every process and the sandbox: imports nothing but domain types.
  'workflows/contracts': { may: [], types: ['domain'], packages: [] },
  // Starts workflows by name: of workflows/ only the modules shared with the API (docs/decisions.md).
  api: {
    may: [
      'domain',
      'infra',
      'db',
      'services',
      'workflows/contracts',
      'workflows/describe-failure',
      'workflows/retry-policy',
      'workflows/search-attributes',
      'workflows/user-metadata',
      'runtime',
      'start-worker',
    ],
  },
  // Composition roots and what they share: everything but each other's entry points and test/.
  runtime: { may: ['domain', 'infra', 'db', 'workflows/contracts'] },
  'start-worker': { may: ['domain', 'infra', 'db', 'services', 'activities', 'workflows', 'runtime'] },
  worker: {
    may: ['domain', 'infra', 'db', 'services', 'activities', 'workflows', 'runtime', 'start-worker'],
  },
  embedded: {
    may: ['domain', 'infra', 'db', 'services', 'activities', 'workflows', 'api', 'runtime', 'start-worker'],
  },
};

const ROOT = import.meta.dirname;
const NOT_PROJECT = new Set(['node_modules', 'dist', 'coverage', '.git']);

const isDir = (p) => existsSync(path.join(ROOT, p)) && statSync(path.join(ROOT, p)).isDirectory();

/** Project paths (folders, and .ts files without extension) directly under `dir` ('' = root). */
function entries(dir) {
  return readdirSync(path.join(ROOT, dir))
    .filter((name) => !name.startsWith('.') && !NOT_PROJECT.has(name))
    .map((name) => path.posix.join(dir, name))
    .filter((p) => isDir(p) || p.endsWith('.ts'))
    .map((p) => p.replace(/\.ts$/, ''));
}

const within = (p, area) => p === area || p.startsWith(`${area}/`);

/** The project paths outside `allowed` as the fewest whole subtrees (descending where needed). */
function outside(allowed, dir = '') {
  return entries(dir).flatMap((p) => {
    if (allowed.some((a) => within(p, a))) return [];
    if (allowed.some((a) => within(a, p)) && isDir(p)) return outside(allowed, p);
    return [p];
  });
}

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A regex matching relative specifiers from `dir` that land in one of `targets`. */
function specifiers(dir, targets) {
  const rel = targets.map((t) => {
    const r = path.posix.relative(dir, t);
    return escape(r.startsWith('.') ? r : `./${r}`);
  });
  return `^(${rel.join('|')})(/.*)?$`;
}

/** Every folder of a room (the room itself and its subfolders that no more specific room owns). */
function folders(room) {
  if (!isDir(room)) return [''];
  const sub = entries(room).filter((p) => isDir(p) && !(p in HOUSE));
  return [room, ...sub.flatMap((p) => folders(p).filter((f) => f !== ''))];
}

function allowedText(rule) {
  const what = [...rule.may, ...(rule.types ?? []).map((t) => `types of ${t}`)];
  return what.length > 0 ? `only ${what.join(', ')} (and itself)` : 'nothing of the project but itself';
}

function restrictionsOf(room, dir) {
  const rule = HOUSE[room];
  const types = rule.types ?? [];
  const forbidden = outside([room, ...rule.may, ...types]);
  const patterns = [];
  if (forbidden.length > 0)
    patterns.push({
      regex: specifiers(dir, forbidden),
      message: `DESIGN §2: ${room} may import ${allowedText(rule)}.`,
    });
  if (types.length > 0)
    patterns.push({
      regex: specifiers(dir, types),
      allowTypeImports: true,
      message: `DESIGN §2: ${room} may import ${types.join(', ')} as types only (import type).`,
    });
  if (rule.packages)
    patterns.push({
      regex: `^(?!\\.|${rule.packages.map(escape).join('$|')}$)`,
      message: `DESIGN §2: ${room} imports ${rule.packages.length > 0 ? `no package but ${rule.packages.join(', ')}` : 'no package'}.`,
    });
  return patterns;
}

/** Flat-config entries: one per product folder (and root file), each with its forbidden arrows. */
export function importDirections() {
  return Object.keys(HOUSE).flatMap((room) =>
    folders(room).map((dir) => ({
      files: [dir === '' ? `${room}.ts` : `${dir}/*.ts`],
      rules: { 'no-restricted-imports': ['error', { patterns: restrictionsOf(room, dir) }] },
    })),
  );
}
