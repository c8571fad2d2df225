import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import type { Page } from 'playwright-core';
import type { DevnetInfo } from '../../src/chain-ingest/evm/devnet/devnet-info.ts';
import { createJsonRpc } from '../../src/chain-ingest/evm/devnet/json-rpc.ts';
import { apiClient, eventually } from '../support/api-client.ts';
import { launchChromium } from '../support/chromium.ts';
import { findFreePort } from '../support/free-port.ts';
import { injectedWallet } from '../support/injected-wallet.ts';
import { codeBlocks, readmeSection, runBlock as runReadmeBlock } from '../support/readme.ts';
import { collectOutput, ROOT } from '../support/weir-process.ts';

/**
 * The README's "Run it" and "First steps", followed as written: `npm start` on a fresh data dir
 * (its local chain included), the shell blocks run by bash as they stand (only the port, the data
 * dir and the key the first block printed filled in), then the hosted page paid in Chromium by the
 * buttons the text names: once with the test wallet, once through an injected EIP-1193 wallet.
 */

const section = readmeSection;
const shellBlocks = (text: string): string[] => codeBlocks(text, 'sh');
/** The bold words of a numbered step ("5. …") of First steps, in order. */
const boldWordsOfStep = (text: string, step: number): string[] => {
  const match = text.match(new RegExp(`\\n${step}\\. ([\\s\\S]*?)(?=\\n\\d+\\. |\\n\\n)`));
  if (!match) throw new Error(`README's First steps has no step ${step}`);
  return [...match[1]!.matchAll(/\*\*(.+?)\*\*/g)].map((m) => m[1]!);
};

type Session = { id: string; url: string; status: string; amountReceived: string };

/** `npm start` as the README runs it, in its own process group so the whole tree stops with it. */
async function npmStart(t: ExecutionContext, dataDir: string): Promise<{ url: string; port: number }> {
  const port = await findFreePort();
  const { NATS_URL: _n, KURRENTDB_URL: _k, MONGODB_URL: _m, WEIR_LOCAL_CHAIN: _l, ...env } = process.env;
  const child: ChildProcess = spawn('npm', ['start'], {
    cwd: ROOT,
    env: { ...env, PORT: String(port), HOST: '127.0.0.1', WEIR_DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const output = collectOutput(child).both;
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  t.teardown(async () => {
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      /* already gone */
    }
    await exited;
  });
  const url = `http://127.0.0.1:${port}`;
  await eventually(
    async () => {
      if (child.exitCode !== null) throw new Error(`npm start exited:\n${output()}`);
      const health = await fetch(`${url}/health`).catch(() => null);
      return health?.ok ? true : undefined;
    },
    `npm start to answer /health ok\n${output()}`,
    90_000,
  );
  return { url, port };
}

/** A README shell block run by bash as written, with `localhost:8080` pointing at this run's port. */
const runBlock = (
  block: string,
  port: number,
  dataDir: string,
  fill: Record<string, string> = {},
  env: Record<string, string> = {},
): Promise<string> => runReadmeBlock(block, { port, dataDir, fill, env });

/** The JSON documents a block printed, one per line (the README's curl calls end each with a newline). */
const jsonLines = (stdout: string): Record<string, unknown>[] =>
  stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

/** Chooses the asset the step names and waits for the payment request. */
async function choose(page: Page, asset: string, network: string) {
  await page.getByRole('button', { name: new RegExp(`${asset}.*${network}`) }).click();
  await page.locator('#reveal').waitFor({ state: 'visible' });
}

test('the README, followed as written: npm start on a fresh data dir, an organization, a wallet on the local chain, a session paid in the browser with the test wallet, another through an EIP-1193 wallet, a third by two calls without a browser', async (t) => {
  const runIt = section('## Run it');
  t.is(shellBlocks(runIt)[0]?.trim(), 'npm ci && npm start', 'the README leads with the set-up-and-run command');
  t.is(shellBlocks(runIt)[1]?.trim(), 'npm ci && npm test', 'and the set-up-and-test command');
  const steps = section('### First steps');
  const [orgBlock, apiBlock] = shellBlocks(steps);
  t.truthy(orgBlock && apiBlock, 'First steps has its two shell blocks');

  const dataDir = await mkdtemp(join(tmpdir(), 'weir-readme-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const weir = await npmStart(t, dataDir);

  // 1. The organization.
  const org = JSON.parse(await runBlock(orgBlock!, weir.port, dataDir)) as { testSecretKey: string };
  t.regex(org.testSecretKey, /^sk_test_/);
  // 2.–4. The key, the wallet on the local chain, the session.
  const key = { 'KEY=sk_test_…': `KEY=${org.testSecretKey}` };
  const [wallet, created] = jsonLines(await runBlock(apiBlock!, weir.port, dataDir, key));
  t.like(wallet, { chainId: 31337 }, JSON.stringify(wallet));
  const session = created as Session;
  t.is(session.status, 'open', JSON.stringify(session));

  const browser = await launchChromium(t);
  const context = await browser.newContext({ viewport: { width: 390, height: 900 } });
  // The shop of the README's successUrl, answered here: the test has no internet.
  await context.route('https://shop.example/**', (route) =>
    route.fulfill({ status: 200, contentType: 'text/html', body: '<title>Thanks</title>Thanks' }),
  );
  const api = apiClient(weir.url, org.testSecretKey);
  const completed = (id: string) =>
    eventually(
      async () => {
        const s = (await api.get<Session>(`/api/v1/checkout/sessions/${id}`)).body;
        return s.status === 'complete' ? s : undefined;
      },
      `session ${id} complete`,
      30_000,
    );

  // 5. Choose the asset, press "Pay with test wallet", end on the success URL.
  const [asset, network, payButton, , paid] = boldWordsOfStep(steps, 5);
  t.deepEqual([asset, network, payButton, paid], ['Test USD Coin', 'Local Devnet', 'Pay with test wallet', 'Paid']);
  const page = await context.newPage();
  await page.goto(session.url);
  await choose(page, asset!, network!);
  await page.getByRole('button', { name: payButton! }).click();
  await page.waitForURL(`https://shop.example/thanks?session=${session.id}`, { timeout: 30_000 });
  t.is((await completed(session.id)).amountReceived, '300000000');
  // Reopened, the page says it is paid.
  await page.goto(session.url);
  t.is(await page.locator('#status-title').textContent(), paid ?? null);

  // 6. A second order, paid by "Connect wallet" from a payer account of devnet.json in an injected wallet.
  const [connectButton] = boldWordsOfStep(steps, 6);
  t.is(connectButton, 'Connect wallet');
  const devnet = JSON.parse(await readFile(join(dataDir, 'local-chain', 'devnet.json'), 'utf8')) as DevnetInfo;
  const payer = devnet.accounts.find((a) => a.role === 'payer')!.address;
  const sessionOnly = apiBlock!.slice(apiBlock!.indexOf('# 4.'));
  const [second] = jsonLines(
    await runBlock(sessionOnly, weir.port, dataDir, { 'order-1001': 'order-1002' }, { KEY: org.testSecretKey }),
  ) as Session[];
  t.not(second!.id, session.id);
  const walletPage = await context.newPage();
  const rpc = createJsonRpc(devnet.rpcUrl);
  await walletPage.exposeFunction('weirTestNode', (method: string, params: unknown[]) => rpc(method, params));
  await walletPage.addInitScript({ content: injectedWallet(payer, 'eip6963', false) });
  await walletPage.goto(second!.url);
  await choose(walletPage, asset!, network!);
  // Both ways are offered in the test environment.
  await walletPage.getByRole('button', { name: payButton! }).waitFor({ state: 'visible' });
  await walletPage.getByRole('button', { name: connectButton! }).click();
  await walletPage.waitForURL(`https://shop.example/thanks?session=${second!.id}`, { timeout: 30_000 });
  t.is((await completed(second!.id)).amountReceived, '300000000');

  // Without a browser: the asset chosen and the test wallet's payment sent by the two calls of the third block.
  const [third] = jsonLines(
    await runBlock(sessionOnly, weir.port, dataDir, { 'order-1001': 'order-1003' }, { KEY: org.testSecretKey }),
  ) as Session[];
  const [chosen, sent] = jsonLines(
    await runBlock(shellBlocks(steps)[2]!, weir.port, dataDir, { 'ID=…': `ID=${third!.id}` }),
  );
  t.like(chosen, { amountDue: '3' }, JSON.stringify(chosen));
  t.truthy(sent?.transactionHash, JSON.stringify(sent));
  t.is((await completed(third!.id)).amountReceived, '300000000');
});
