// Runs the scripted fake model server on its own (README quick start): any model name and any api_key
// get a streamed `Echo: ...` answer over the OpenAI Responses API, so Agentry runs without a real LLM.
import { startFakeModelServer } from '../test/fakes/fake-model-server';

async function main(): Promise<void> {
  const rawPort = process.env.FAKE_LLM_PORT ?? '8090';
  const port = Number(rawPort);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`FAKE_LLM_PORT must be a port number, got '${rawPort}'`);
  }
  const host = process.env.FAKE_LLM_HOST ?? '127.0.0.1';
  const server = await startFakeModelServer({ port, host, defaults: { deltaDelayMs: 30 } });
  console.log(
    `Fake model server (OpenAI Responses API) listening on ${server.url} — register it with any model name and any api_key`,
  );

  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    console.log(`Received ${signal}, stopping fake model server`);
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  // `on`, not `once`: Ctrl-C reaches node twice (from the terminal, and forwarded by npm, whose
  // child node is), and a second signal without a listener would kill it mid-stop.
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((error: unknown) => {
  console.error(
    `Fake model server failed to start: ${error instanceof Error ? error.message : String(error)}`,
  );
  process.exit(1);
});
