// Runs README.md's walk-through as a reader would: every ```bash block between
// `<!-- walkthrough:start -->` and `<!-- walkthrough:end -->`, in order, in one bash session (so a
// block's variables reach the next), with `set -eo pipefail`. Every curl command in a block ends
// with a `# → <status>` comment; a wrapper records each curl's HTTP status and the runner checks it
// against the first annotation at or after the line bash reports for it (bash names the first or
// the last line of a multi-line command). The target substitutes the values of the `export NAME=`
// lines it names (the instance's URL, the model server's).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface WalkthroughBlock {
  /** README line of the block's first command line (1-based). */
  line: number;
  text: string;
  /** Line in the block (1-based) → the status its `# → NNN` comment expects. */
  expected: Map<number, number>;
}

export interface WalkthroughTarget {
  /** Values for the README's `export NAME=...` lines, e.g. { AGENTRY: 'http://127.0.0.1:41234' }. */
  exports: Record<string, string>;
  /** The directory the blocks run in (the README runs them in the checkout). */
  cwd: string;
  /** The whole walk-through must end within this time. */
  deadlineMs: number;
}

export interface WalkthroughResult {
  /** One line per problem: a block that exited non-zero, a status that differs from its comment. */
  failures: string[];
  /** Everything the blocks printed, for the failure report. */
  stdout: string;
  stderr: string;
  /** How many curl commands ran. */
  requests: number;
}

const START = '<!-- walkthrough:start -->';
const END = '<!-- walkthrough:end -->';
const ANNOTATION = /#\s*→\s*(\d{3})\b/;

/** The ```bash blocks of the walk-through section, with the status each curl line expects. */
export function readWalkthrough(markdown: string): WalkthroughBlock[] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => l.trim() === START);
  const end = lines.findIndex((l) => l.trim() === END);
  if (start < 0 || end < start) throw new Error(`README.md has no ${START} … ${END} section`);
  const blocks: WalkthroughBlock[] = [];
  for (let i = start + 1; i < end; i++) {
    if (lines[i]!.trim() !== '```bash') continue;
    const close = lines.findIndex((l, j) => j > i && l.trim() === '```');
    if (close < 0 || close > end) throw new Error(`README.md line ${i + 1}: unclosed bash block`);
    const body = lines.slice(i + 1, close);
    const expected = new Map<number, number>();
    body.forEach((l, j) => {
      const match = ANNOTATION.exec(l);
      if (match) expected.set(j + 1, Number(match[1]));
    });
    blocks.push({ line: i + 2, text: body.join('\n'), expected });
    i = close;
  }
  return blocks;
}

/** Replaces the value of `export NAME=...` lines; every name must occur. */
export function substituteExports(
  blocks: WalkthroughBlock[],
  exports: Record<string, string>,
): WalkthroughBlock[] {
  const seen = new Set<string>();
  const out = blocks.map((block) => ({
    ...block,
    text: block.text.replace(/^export ([A-Z_][A-Z0-9_]*)=.*$/gm, (line, name: string) => {
      if (!(name in exports)) return line;
      seen.add(name);
      return `export ${name}='${exports[name]!.replace(/'/g, `'\\''`)}'`;
    }),
  }));
  const missing = Object.keys(exports).filter((name) => !seen.has(name));
  if (missing.length)
    throw new Error(`README.md walk-through sets no ${missing.join(', ')} (export NAME=...)`);
  return out;
}

interface StatusRecord {
  block: number;
  line: number;
  status: number;
}

function parseStatuses(log: string): StatusRecord[] {
  const records: StatusRecord[] = [];
  let block = -1;
  for (const line of log.split('\n')) {
    const marker = /^@@block (\d+)$/.exec(line);
    if (marker) block = Number(marker[1]);
    const status = /^@@status (\d+) (\d{3})$/.exec(line);
    if (status) records.push({ block, line: Number(status[1]), status: Number(status[2]) });
  }
  return records;
}

/** Checks every recorded status against the block's annotations, and every annotation was reached. */
function checkStatuses(blocks: WalkthroughBlock[], records: StatusRecord[], reached: number): string[] {
  const failures: string[] = [];
  const hit = new Set<string>();
  for (const r of records) {
    const block = blocks[r.block]!;
    const at = [...block.expected.keys()].filter((l) => l >= r.line).sort((a, b) => a - b)[0];
    const readmeLine = block.line + r.line - 1;
    if (at === undefined) {
      failures.push(`README.md line ${readmeLine}: a curl command without a '# → <status>' comment`);
      continue;
    }
    hit.add(`${r.block}:${at}`);
    const want = block.expected.get(at)!;
    if (r.status !== want)
      failures.push(`README.md line ${block.line + at - 1}: expected HTTP ${want}, got ${r.status}`);
  }
  blocks.slice(0, reached).forEach((block, b) => {
    for (const line of block.expected.keys())
      if (!hit.has(`${b}:${line}`))
        failures.push(`README.md line ${block.line + line - 1}: annotated, but no curl command ran there`);
  });
  return failures;
}

/** Runs the blocks in one bash session; never throws for a README problem (see `failures`). */
export async function runWalkthrough(
  allBlocks: WalkthroughBlock[],
  target: WalkthroughTarget,
): Promise<WalkthroughResult> {
  const blocks = substituteExports(allBlocks, target.exports);
  const dir = mkdtempSync(path.join(tmpdir(), 'agentry-readme-'));
  const statusLog = path.join(dir, 'statuses.log');
  try {
    const script = [
      'set -eo pipefail',
      `STATUS_LOG='${statusLog}'`,
      // curl's own messages (-sS) go to the log too, so a failure report shows them.
      'curl() { command curl --write-out "%{stderr}\\n@@status ${BASH_LINENO[0]} %{http_code}\\n" "$@" 2>>"$STATUS_LOG"; }',
      ...blocks.flatMap((block, i) => {
        const file = path.join(dir, `block-${i}.sh`);
        writeFileSync(file, `${block.text}\n`);
        return [`echo '@@block ${i}' >>"$STATUS_LOG"`, `echo '@@block ${i}' >&2`, `source '${file}'`];
      }),
      `echo '@@block ${blocks.length}' >>"$STATUS_LOG"`,
    ].join('\n');
    writeFileSync(path.join(dir, 'walkthrough.sh'), script);
    writeFileSync(statusLog, '');
    const run = await runBash(path.join(dir, 'walkthrough.sh'), target.cwd, target.deadlineMs);
    const log = readFileSync(statusLog, 'utf8');
    const records = parseStatuses(log);
    const markers = [...log.matchAll(/^@@block (\d+)$/gm)].map((m) => Number(m[1]));
    const last = markers.length ? markers[markers.length - 1]! : 0;
    const failures: string[] = [];
    if (run.timedOut || run.code !== 0) {
      const block = blocks[last];
      const where = block ? `the block at README.md line ${block.line}` : 'the walk-through';
      failures.push(
        run.timedOut
          ? `${where} did not finish within ${target.deadlineMs} ms`
          : `${where} exited with status ${run.code}`,
      );
    }
    const reached = run.code === 0 && !run.timedOut ? blocks.length : last;
    failures.push(...checkStatuses(blocks, records, reached));
    return { failures, stdout: run.stdout, stderr: `${run.stderr}\n${log}`, requests: records.length };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function runBash(
  script: string,
  cwd: string,
  deadlineMs: number,
): Promise<{ code: number | null; timedOut: boolean; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    // Its own process group, so the deadline ends curl and node children too.
    const child = spawn('bash', ['--noprofile', '--norc', script], {
      cwd,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => {
      timedOut = true;
      process.kill(-child.pid!, 'SIGKILL');
    }, deadlineMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, timedOut, stdout, stderr });
    });
  });
}

/** README.md's walk-through blocks. */
export const readmeWalkthrough = (root: string): WalkthroughBlock[] =>
  readWalkthrough(readFileSync(path.join(root, 'README.md'), 'utf8'));

/**
 * What every target must show besides the statuses: the agent's input variables, a streamed
 * NDJSON and SSE answer, the plain-text answer grounded in the seed's fragment, the trace with
 * that fragment and the rendered prompt, and one execution for both idempotent requests.
 */
export function expectWalkthroughAnswers(result: WalkthroughResult): void {
  const report = `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`;
  expect({ failures: result.failures, report: result.failures.length ? report : '' }).toEqual({
    failures: [],
    report: '',
  });
  const out = result.stdout;
  expect(out).toContain('"input_variables":["question"]');
  expect(out).toMatch(/"context":\[\{"id":"[0-9a-f-]{36}","classification":"internal"/);
  expect(out).toMatch(/^\{"type":"done","seq":\d+,"attempt":1,"usage":/m);
  expect(out).toMatch(/^event: done$/m);
  expect(out).toContain('Echo: Reference text:\nDatabase credentials rotate every 30 days.');
  expect(out).toContain('"inputs":{"question":"How do I rotate the database credentials?"}');
  expect(out).toContain('"detail":"Trace with id');
  const ids = [...out.matchAll(/← execution ([0-9a-f-]{36})$/gm)].map((m) => m[1]);
  expect(ids).toHaveLength(2);
  expect(ids[1]).toBe(ids[0]);
}
