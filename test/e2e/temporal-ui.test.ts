// Issue 13 items 1 and 5 in a real browser: headless Chromium opens the Temporal UI of a dev
// server configured like `npm start` configures its own (the codec endpoint is the capability
// URL), on an agent execution's page and on the workflow list. The decoded input shows the
// execution's ids, the UI's decode requests went to the capability URL and succeeded, and the
// page never says the codec server could not connect. Screenshots of both pages go to a temporary
// directory, so a test run leaves the tree as it found it; `npm run screenshots` runs this file
// with AGENTRY_SCREENSHOTS_DIR=docs/images to update the ones docs/operations.md shows.
import { defaultPayloadConverter } from '@temporalio/common';
import type { Browser, HTTPResponse, Page } from 'puppeteer-core';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { KeyRing } from '../../infra/crypto';
import { startFakeModelServer, type FakeModelServer } from '../fakes/fake-model-server';
import { TEST_APPLICATION_SECRET } from '../helpers/config';
import { answerOf, parseNdjson } from '../helpers/http';
import { createRetrievalAgent, seedPipeline } from '../helpers/knowledge';
import { freePort } from '../helpers/ports';
import { ROOT } from '../helpers/services';
import { startStack, type Stack } from '../helpers/stack';
import { launchChromium, startUiDevServer, type UiDevServer } from '../helpers/temporal-ui';

jest.setTimeout(240_000);

const QUESTION = 'Which lighthouse keeps the quillfeather logbook?';
const ANSWER = 'The northern one keeps it';
const CAPABILITY = new KeyRing(TEST_APPLICATION_SECRET).codecCapability();
const DOC_IMAGES = path.join(ROOT, 'docs', 'images');
const IMAGES = process.env.AGENTRY_SCREENSHOTS_DIR
  ? path.resolve(process.env.AGENTRY_SCREENSHOTS_DIR)
  : mkdtempSync(path.join(tmpdir(), 'agentry-screenshots-'));
/** The tracked screenshots' modification times before the run: untouched unless they are the target. */
const trackedBefore = new Map(
  ['temporal-ui-execution.png', 'temporal-ui-list.png'].map((f) => [
    f,
    statSync(path.join(DOC_IMAGES, f)).mtimeMs,
  ]),
);
const NO_CODEC = /could not connect/i;

let ui: UiDevServer;
let stack: Stack;
let fake: FakeModelServer;
let browser: Browser;
let execution: {
  workflowId: string;
  executionId: string;
  requestPayloadId: string;
  agentId: string;
  llmId: string;
};
/** Every response of the page to a codec request: method, path and status. */
const codecCalls: { method: string; path: string; status: number }[] = [];

beforeAll(async () => {
  const apiPort = await freePort();
  ui = await startUiDevServer(`http://127.0.0.1:${apiPort}/temporal-codec/${CAPABILITY}`);
  fake = await startFakeModelServer();
  stack = await startStack({
    env: { PORT: String(apiPort), TEMPORAL_ADDRESS: ui.address, AGENTRY_CODEC_CORS_ORIGINS: ui.uiUrl },
  });
  const { pipelineId } = await seedPipeline(stack.api, {
    name: 'coastal handbook',
    documents: ['The northern lighthouse keeps the quillfeather logbook.'],
  });
  const llm = await stack.api.post('/llms', {
    name: 'house model',
    endpoint: fake.url,
    model: 'm',
    api_key: 'sk',
  });
  const agentId = await createRetrievalAgent(stack.api, 'Harbour desk');
  fake.script('m', { text: ANSWER });
  const res = await stack.api.post(
    `/agents/${agentId}/execute`,
    { prompt: { question: QUESTION }, classification: 'public' },
    { 'x-pipeline-id': pipelineId, 'x-llm-id': llm.body.id },
  );
  expect(answerOf(parseNdjson(res.text))).toBe(ANSWER);
  const executionId = res.headers.get('x-agentry-execution-id')!;
  const workflowId = `execution-${executionId}`;
  // The input as the SDK decodes it (the codec in process): the ids the page must show.
  const handle = stack.temporal.workflow.getHandle(workflowId);
  await handle.result();
  const started = (await handle.fetchHistory()).events![0]!.workflowExecutionStartedEventAttributes!;
  const [decoded] = await stack.rt.codec.decode(started.input!.payloads!);
  const input = defaultPayloadConverter.fromPayload<{ requestPayloadId: string }>(decoded!);
  execution = {
    workflowId,
    executionId,
    requestPayloadId: input.requestPayloadId,
    agentId: agentId,
    llmId: llm.body.id,
  };
  browser = await launchChromium();
});

afterAll(async () => {
  if (!process.env.AGENTRY_SCREENSHOTS_DIR) rmSync(IMAGES, { recursive: true, force: true });
  await browser?.close();
  await stack?.stop();
  await fake?.close();
  await ui?.stop();
});

async function open(url: string, localStorage: Record<string, unknown> = {}): Promise<Page> {
  const page = await browser.newPage();
  page.on('response', (r: HTTPResponse) => {
    const u = new URL(r.url());
    if (u.pathname.startsWith('/temporal-codec'))
      codecCalls.push({ method: r.request().method(), path: u.pathname, status: r.status() });
  });
  // The UI's settings live in localStorage (e.g. the list's columns): set before its scripts run.
  const entries = Object.entries(localStorage).map(([k, v]) => [k, JSON.stringify(v)]);
  await page.evaluateOnNewDocument(
    `for (const [k, v] of ${JSON.stringify(entries)}) window.localStorage.setItem(k, v);`,
  );
  await page.goto(url, { waitUntil: 'networkidle2', timeout: 90_000 });
  return page;
}

/** Saves the page as `file` in IMAGES: a PNG there, and docs/images/ unchanged unless it is IMAGES. */
async function screenshot(page: Page, file: string): Promise<void> {
  await page.screenshot({ path: path.join(IMAGES, file) });
  expect(readFileSync(path.join(IMAGES, file)).subarray(1, 4).toString('latin1')).toBe('PNG');
  if (IMAGES !== DOC_IMAGES)
    expect(statSync(path.join(DOC_IMAGES, file)).mtimeMs).toBe(trackedBefore.get(file));
}

/** The page's visible text (evaluated in the page: this file has no DOM types). */
const pageText = (page: Page): Promise<string> => page.evaluate('document.body.innerText') as Promise<string>;

/** Waits (90 s at most) until the page's visible text has every one of `texts`. */
async function waitForText(page: Page, texts: string[]): Promise<void> {
  await page
    .waitForFunction(`${JSON.stringify(texts)}.every((t) => document.body.innerText.includes(t))`, {
      timeout: 90_000,
      polling: 250,
    })
    .catch(async (err: Error) => {
      throw new Error(`${err.message}; page text:\n${(await pageText(page)).slice(0, 3000)}`);
    });
}

it("DX-6 in Chromium: an execution's page decodes its input (ids shown) through the capability URL, never 'could not connect'", async () => {
  const page = await open(`${ui.uiUrl}/namespaces/default/workflows/${execution.workflowId}`);
  // The decoded input's ids, and the decoded summary (user metadata) on the started event.
  await waitForText(page, [
    `"requestPayloadId": "${execution.requestPayloadId}"`,
    `"agentId": "${execution.agentId}"`,
    'agent execution · agent "Harbour desk" v1 · pipeline "coastal handbook" · LLM "house model"',
  ]);
  const text = await pageText(page);
  expect(text).not.toMatch(NO_CODEC);
  expect(text).not.toContain('binary/encrypted');
  // No content: the question and the answer are not in history, decoded or not.
  expect(text).not.toContain('quillfeather');
  // The browser's own requests: preflights and decodes, all on the capability URL, all answered.
  const capabilityPath = `/temporal-codec/${CAPABILITY}/decode`;
  expect(codecCalls.filter((c) => c.method === 'POST').length).toBeGreaterThan(0);
  for (const call of codecCalls)
    expect(call).toEqual({
      method: call.method,
      path: capabilityPath,
      status: call.method === 'OPTIONS' ? 204 : 200,
    });
  await screenshot(page, 'temporal-ui-execution.png');
});

it("issue 13: the workflow list names each execution's agent and LLM (DX-5 columns)", async () => {
  // UI 2.42's list has no summary column (visibility carries no user metadata): the operator adds
  // the DX-5 search attributes as columns, as stored here in the UI's own setting.
  const columns = ['Status', 'Workflow ID', 'Type', 'AgentId', 'LlmId', 'PipelineId'];
  const page = await open(`${ui.uiUrl}/namespaces/default/workflows`, {
    'namespace-workflow-table-columns': { default: columns.map((label) => ({ label, pinned: false })) },
  });
  await page.setViewport({ width: 2200, height: 700 });
  await waitForText(page, [execution.workflowId, execution.agentId, execution.llmId]);
  expect(await pageText(page)).not.toMatch(NO_CODEC);
  await screenshot(page, 'temporal-ui-list.png');
});
