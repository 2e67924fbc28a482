// Prints the Temporal UI's codec endpoint with its capability (DX-6): the URL to hand to
// `TEMPORAL_CODEC_ENDPOINT` (docker-compose) or `--ui-codec-endpoint` (a dev server). It is
// derived from AGENTRY_APPLICATION_SECRET (else the quick start's .agentry/secrets.json) and is a
// secret like an admin key: printed on request, never logged. `--capability` prints the path
// segment alone (AGENTRY_CODEC_CAPABILITY in docker-compose's .env).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { KeyRing } from '../infra/crypto';

function applicationSecret(): string {
  const fromEnv = process.env.AGENTRY_APPLICATION_SECRET;
  if (fromEnv) return fromEnv;
  const file = path.resolve(process.env.AGENTRY_STATE_DIR ?? '.agentry', 'secrets.json');
  if (existsSync(file)) {
    const stored = (JSON.parse(readFileSync(file, 'utf8')) as { applicationSecret?: unknown })
      .applicationSecret;
    if (typeof stored === 'string') return stored;
  }
  throw new Error(`Set AGENTRY_APPLICATION_SECRET (no quick-start secret in ${file} either)`);
}

function main(): void {
  const secret = applicationSecret();
  if (Buffer.byteLength(secret) < 32) throw new Error('AGENTRY_APPLICATION_SECRET must be at least 32 bytes');
  const capability = new KeyRing(secret).codecCapability();
  if (process.argv.includes('--capability')) {
    console.log(capability);
    return;
  }
  const base = (process.env.AGENTRY_PUBLIC_URL ?? 'http://localhost:8080').replace(/\/+$/, '');
  console.log(`${base}/temporal-codec/${capability}`);
}

try {
  main();
} catch (err) {
  console.error(`codec-url: ${(err as Error).message}`);
  process.exit(1);
}
