// The browser test's own services (issue 13): a Temporal dev server with its UI on free ports,
// configured with a codec endpoint (started like every dev server, by
// scripts/temporal-dev-server.sh), and headless Chromium (Debian's package, installed by
// scripts/ensure-chromium.sh when missing) driven by puppeteer-core.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import puppeteer, { type Browser } from 'puppeteer-core';
import { freePort } from './ports';
import { ROOT, STATE_DIR } from './services';

export interface UiDevServer {
  address: string;
  uiUrl: string;
  stop(): Promise<void>;
}

/** An in-memory dev server whose UI (on 127.0.0.1) calls `codecEndpoint` to decode payloads. */
export async function startUiDevServer(codecEndpoint: string): Promise<UiDevServer> {
  const [port, uiPort] = [await freePort(), await freePort()];
  const pid = Number(
    execFileSync(
      'bash',
      [
        path.join(ROOT, 'scripts/temporal-dev-server.sh'),
        String(port),
        path.join(STATE_DIR, `temporal-ui-${port}`),
        ...['--ui-port', String(uiPort), '--ui-codec-endpoint', codecEndpoint],
      ],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
    ).trim(),
  );
  if (!Number.isInteger(pid)) throw new Error(`A Temporal server already answered on port ${port}`);
  return {
    address: `127.0.0.1:${port}`,
    uiUrl: `http://127.0.0.1:${uiPort}`,
    async stop() {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        return;
      }
      for (let i = 0; i < 100; i++) {
        try {
          process.kill(pid, 0);
        } catch {
          return;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      process.kill(pid, 'SIGKILL');
    },
  };
}

/** Headless Chromium; as root it needs --no-sandbox. */
export async function launchChromium(): Promise<Browser> {
  const executablePath = execFileSync('bash', [path.join(ROOT, 'scripts/ensure-chromium.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
  return puppeteer.launch({
    executablePath,
    headless: true,
    args: [
      ...(process.getuid?.() === 0 ? ['--no-sandbox'] : []),
      '--disable-dev-shm-usage',
      '--disable-gpu',
      '--window-size=1440,1000',
    ],
    defaultViewport: { width: 1440, height: 1000 },
  });
}
