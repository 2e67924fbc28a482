// scripts/ensure-temporal.sh without Go: the platform's official release archive is chosen,
// downloaded from TEMPORAL_CLI_DOWNLOAD_URL (here a local HTTP server), checked against the
// release's checksums.txt, installed into the cache and reused; `go install` only when that fails;
// one line naming both ways when neither works. No network: PATH is a directory of links to the
// few tools the script needs, plus a fake `uname` (the platform) and, when wanted, a fake `go`.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

const SCRIPT = path.resolve(__dirname, '../../scripts/ensure-temporal.sh');
const GO_PACKAGE = 'go install github.com/temporalio/cli/cmd/temporal@v1.5.1';
const TOOLS = [
  'curl',
  'tar',
  'gzip',
  'sha256sum',
  'shasum',
  'cut',
  'awk',
  'mktemp',
  'mkdir',
  'rm',
  'chmod',
  'mv',
  'grep',
  'tail',
  'date',
];

let root: string;
let bash: string;
let server: Server;
let base: string;
/** Served files by URL path; each test sets its own. */
let files = new Map<string, Buffer>();
const requests: string[] = [];

function which(tool: string): string {
  return execFileSync('bash', ['-c', `command -v ${tool} || true`], { encoding: 'utf8' }).trim();
}

function script(file: string, body: string): void {
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
}

/** A tar.gz laid out like the release's (`temporal` and LICENSE at the root). */
function archive(version: string): Buffer {
  const dir = mkdtempSync(path.join(root, 'archive-'));
  script(path.join(dir, 'temporal'), `echo "temporal version ${version} (Server 1.29.1, UI 2.42.1)"`);
  writeFileSync(path.join(dir, 'LICENSE'), 'MIT\n');
  execFileSync('tar', ['-czf', path.join(dir, 'out.tar.gz'), '-C', dir, 'temporal', 'LICENSE']);
  return readFileSync(path.join(dir, 'out.tar.gz'));
}

const sha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

/** checksums.txt as goreleaser writes it: "<sha256>  <file>" per asset. */
function checksums(entries: Record<string, Buffer | string>): Buffer {
  const lines = Object.entries(entries).map(([f, d]) => `${typeof d === 'string' ? d : sha256(d)}  ${f}\n`);
  return Buffer.from(lines.join(''));
}

interface Machine {
  /** `uname -s` and `uname -m`. */
  uname: [string, string];
  /** A fake `go` whose `install` writes a 1.5.1 `temporal` into $GOBIN and records the call. */
  go?: boolean;
}

/** A fresh cache dir and a PATH with only the script's tools; returns the run's paths. */
function machine({ uname, go }: Machine): { bin: string; cache: string; goLog: string } {
  const dir = mkdtempSync(path.join(root, 'machine-'));
  const bin = path.join(dir, 'bin');
  mkdirSync(bin);
  for (const tool of TOOLS) {
    const real = which(tool);
    if (real) symlinkSync(real, path.join(bin, tool));
  }
  script(path.join(bin, 'uname'), `case "$1" in -s) echo ${uname[0]} ;; -m) echo ${uname[1]} ;; esac`);
  const goLog = path.join(dir, 'go.log');
  if (go) {
    script(
      path.join(bin, 'go'),
      `echo "$@" > "${goLog}"\nprintf '#!/bin/sh\\necho "temporal version 1.5.1 (go-built)"\\n' > "$GOBIN/temporal"\nchmod 755 "$GOBIN/temporal"`,
    );
  }
  return { bin, cache: path.join(dir, 'cache'), goLog };
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the script asynchronously (the HTTP server lives in this process). */
function ensure(m: { bin: string; cache: string }, url = base): Promise<Run> {
  const env = {
    PATH: m.bin,
    HOME: path.dirname(m.cache),
    AGENTRY_CACHE_DIR: m.cache,
    TEMPORAL_CLI_DOWNLOAD_URL: url,
  };
  return new Promise((resolve, reject) => {
    const child = spawn(bash, [SCRIPT], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The failure's last stderr line, after checking it is the script's one-line message. */
function failureLine(run: Run): string {
  expect(run.code).not.toBe(0);
  expect(run.stdout).toBe('');
  const last = run.stderr.trimEnd().split('\n').pop() ?? '';
  expect(last).toMatch(
    /^ensure-temporal: ERROR: Temporal CLI 1\.5\.1 is missing: downloading the release failed \(/,
  );
  expect(last).toContain(GO_PACKAGE);
  expect(last).toContain('TEMPORAL_CLI_PATH');
  expect(last).toContain('TEMPORAL_ADDRESS');
  return last;
}

const LINUX_AMD64 = 'temporal_cli_1.5.1_linux_amd64.tar.gz';
let good: Buffer;

beforeAll(async () => {
  root = mkdtempSync(path.join(os.tmpdir(), 'agentry-temporal-dl-'));
  bash = which('bash');
  good = archive('1.5.1');
  server = createServer((req, res) => {
    requests.push(req.url ?? '');
    const body = files.get(req.url ?? '');
    res.writeHead(body ? 200 : 404).end(body ?? 'Not Found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1.5.1`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(root, { recursive: true, force: true });
});

beforeEach(() => {
  requests.length = 0;
  files = new Map();
});

function serve(asset: string, data: Buffer, sums = checksums({ [asset]: data })): void {
  files.set(`/v1.5.1/${asset}`, data);
  files.set('/v1.5.1/checksums.txt', sums);
}

it('downloads the verified release into the cache, prints only its path, and reuses it without HTTP', async () => {
  const m = machine({ uname: ['Linux', 'x86_64'] });
  const other = archive('1.5.1-other');
  serve(
    LINUX_AMD64,
    good,
    checksums({ 'temporal_cli_1.5.1_darwin_arm64.tar.gz': other, [LINUX_AMD64]: good }),
  );
  const cached = path.join(m.cache, 'bin', 'temporal');

  const first = await ensure(m);
  expect(first).toMatchObject({ code: 0, stdout: `${cached}\n` });
  expect(requests).toEqual(['/v1.5.1/checksums.txt', `/v1.5.1/${LINUX_AMD64}`]);
  expect(execFileSync(cached, ['--version'], { encoding: 'utf8' })).toBe(
    'temporal version 1.5.1 (Server 1.29.1, UI 2.42.1)\n',
  );
  expect(readdirSync(path.join(m.cache, 'bin'))).toEqual(['temporal']); // no download leftovers

  requests.length = 0;
  const second = await ensure(m);
  expect(second).toMatchObject({ code: 0, stdout: `${cached}\n` });
  expect(requests).toEqual([]);
});

it.each([
  [['Linux', 'aarch64'], 'temporal_cli_1.5.1_linux_arm64.tar.gz'],
  [['Linux', 'amd64'], LINUX_AMD64],
  [['Darwin', 'arm64'], 'temporal_cli_1.5.1_darwin_arm64.tar.gz'],
  [['Darwin', 'x86_64'], 'temporal_cli_1.5.1_darwin_amd64.tar.gz'],
] as [[string, string], string][])('on %j it fetches %s', async (uname, asset) => {
  const m = machine({ uname });
  serve(asset, good);
  const run = await ensure(m);
  expect(run).toMatchObject({ code: 0, stdout: `${path.join(m.cache, 'bin', 'temporal')}\n` });
  expect(requests).toEqual(['/v1.5.1/checksums.txt', `/v1.5.1/${asset}`]);
});

it('an unsupported platform skips the download and builds with go', async () => {
  const m = machine({ uname: ['FreeBSD', 'amd64'], go: true });
  serve(LINUX_AMD64, good);
  const run = await ensure(m);
  expect(run).toMatchObject({ code: 0, stdout: `${path.join(m.cache, 'bin', 'temporal')}\n` });
  expect(requests).toEqual([]);
  expect(readFileSync(m.goLog, 'utf8')).toContain('install');
  expect(run.stderr).toContain('no release for FreeBSD/amd64');
});

it('a checksum mismatch installs nothing and falls back to go install', async () => {
  const m = machine({ uname: ['Linux', 'x86_64'], go: true });
  serve(LINUX_AMD64, good, checksums({ [LINUX_AMD64]: sha256(Buffer.from('something else')) }));
  const cached = path.join(m.cache, 'bin', 'temporal');
  const run = await ensure(m);
  expect(run).toMatchObject({ code: 0, stdout: `${cached}\n` });
  expect(readFileSync(m.goLog, 'utf8')).toContain('github.com/temporalio/cli/cmd/temporal@v1.5.1');
  expect(execFileSync(cached, ['--version'], { encoding: 'utf8' })).toContain('(go-built)');
});

it('a checksum mismatch without go: one line naming both ways, nothing installed', async () => {
  const m = machine({ uname: ['Linux', 'x86_64'] });
  serve(LINUX_AMD64, good, checksums({ [LINUX_AMD64]: sha256(Buffer.from('something else')) }));
  const line = failureLine(await ensure(m));
  expect(line).toContain(`${base}/${LINUX_AMD64}: sha256 ${sha256(good)} does not match checksums.txt`);
  expect(line).toContain('Go is not installed');
  expect(readdirSync(path.join(m.cache, 'bin'))).toEqual([]);
});

it('an asset missing from checksums.txt is not installed', async () => {
  const m = machine({ uname: ['Linux', 'x86_64'] });
  serve(LINUX_AMD64, good, checksums({ 'temporal_cli_1.5.1_linux_arm64.tar.gz': good }));
  expect(failureLine(await ensure(m))).toContain(`no line for ${LINUX_AMD64}`);
  expect(existsSync(path.join(m.cache, 'bin', 'temporal'))).toBe(false);
});

it('a 404 for the archive: one line naming the URL tried and go install', async () => {
  const m = machine({ uname: ['Linux', 'x86_64'] });
  files.set('/v1.5.1/checksums.txt', checksums({ [LINUX_AMD64]: good }));
  const line = failureLine(await ensure(m));
  expect(line).toContain(`${base}/${LINUX_AMD64}: curl: (22)`);
  expect(line).toContain('404');
  expect(readdirSync(path.join(m.cache, 'bin'))).toEqual([]);
});

it('a 404 for checksums.txt stops before the archive is fetched', async () => {
  const m = machine({ uname: ['Linux', 'x86_64'] });
  files.set(`/v1.5.1/${LINUX_AMD64}`, good);
  expect(failureLine(await ensure(m))).toContain(`${base}/checksums.txt: curl: (22)`);
  expect(requests).toEqual(['/v1.5.1/checksums.txt']);
});

it('a verified archive whose binary is not 1.5.x is not installed', async () => {
  const m = machine({ uname: ['Linux', 'x86_64'] });
  serve(LINUX_AMD64, archive('1.4.0'));
  expect(failureLine(await ensure(m))).toContain('the binary does not report version 1.5.x');
  expect(readdirSync(path.join(m.cache, 'bin'))).toEqual([]);
});

it('an empty TEMPORAL_CLI_DOWNLOAD_URL never downloads', async () => {
  const m = machine({ uname: ['Linux', 'x86_64'] });
  serve(LINUX_AMD64, good);
  expect(failureLine(await ensure(m, ''))).toContain('download disabled');
  expect(requests).toEqual([]);
});
