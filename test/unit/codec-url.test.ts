// scripts/codec-url.ts (DX-6): prints the Temporal UI's codec endpoint with the capability the
// API accepts, from AGENTRY_APPLICATION_SECRET or the quick start's .agentry/secrets.json.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { KeyRing } from '../../infra/crypto';

const ROOT = path.resolve(__dirname, '..', '..');
const SECRET = 'codec-url-test-secret-0123456789abcdefgh';

function run(env: Record<string, string>, args: string[] = [], cwd = ROOT) {
  try {
    const stdout = execFileSync(
      process.execPath,
      ['-r', path.join(ROOT, 'scripts/ts-register.js'), path.join(ROOT, 'scripts/codec-url.ts'), ...args],
      { cwd, env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8', stdio: 'pipe' },
    );
    return { status: 0, stdout: stdout.trim(), stderr: '' };
  } catch (err) {
    const e = err as { status: number; stdout: string; stderr: string };
    return { status: e.status, stdout: e.stdout.trim(), stderr: e.stderr.trim() };
  }
}

describe('scripts/codec-url.ts (DX-6)', () => {
  const capability = new KeyRing(SECRET).codecCapability();

  it('DX-6: prints <AGENTRY_PUBLIC_URL>/temporal-codec/<capability>, or the capability alone', () => {
    expect(run({ AGENTRY_APPLICATION_SECRET: SECRET }).stdout).toBe(
      `http://localhost:8080/temporal-codec/${capability}`,
    );
    expect(
      run({ AGENTRY_APPLICATION_SECRET: SECRET, AGENTRY_PUBLIC_URL: 'https://agentry.example/' }).stdout,
    ).toBe(`https://agentry.example/temporal-codec/${capability}`);
    expect(run({ AGENTRY_APPLICATION_SECRET: SECRET }, ['--capability']).stdout).toBe(capability);
  });

  it("DX-6: without the variable it reads the quick start's secrets.json; with neither, or a short secret, it fails clearly", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'codec-url-'));
    try {
      const empty = run({}, [], dir);
      expect(empty.status).toBe(1);
      expect(empty.stderr).toMatch(/^codec-url: Set AGENTRY_APPLICATION_SECRET/);
      writeFileSync(path.join(dir, 'secrets.json'), JSON.stringify({ applicationSecret: SECRET }));
      expect(run({ AGENTRY_STATE_DIR: dir }, ['--capability'], dir).stdout).toBe(capability);
      const short = run({ AGENTRY_APPLICATION_SECRET: 'too-short' });
      expect(short.status).toBe(1);
      expect(short.stderr).toBe('codec-url: AGENTRY_APPLICATION_SECRET must be at least 32 bytes');
      expect(short.stdout).toBe('');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
