import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import type { ChainTransferMessage } from '../chain-messages.ts';
import { evmToTron } from './address.ts';
import { createTronReconciler, type OpenDeposit } from './reconciler.ts';

/** A node answering the reconciler's calls as java-tron does: balances at `latest` only, and the latest block. */
async function fakeNode(t: { teardown(fn: () => unknown): void }, latest: number, balance: bigint) {
  const reads: unknown[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      const { id, method, params } = JSON.parse(body) as { id: number; method: string; params: unknown[] };
      let answer: { result: unknown } | { error: { code: number; message: string } };
      if (method === 'eth_getBlockByNumber') {
        reads.push(`block ${String(params[0])}`);
        answer = { result: { number: `0x${latest.toString(16)}`, hash: `0x${'ab'.repeat(32)}` } };
      } else if (params[1] !== 'latest')
        answer = { error: { code: -32602, message: 'QUANTITY not supported, just support TAG as latest' } };
      else {
        reads.push(`${method} ${String(params[1])}`);
        answer = { result: `0x${balance.toString(16).padStart(64, '0')}` };
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, ...answer }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, reads };
}

const token = evmToTron(`0x${'11'.repeat(20)}`);
const deposit = (credits: OpenDeposit['credits']): OpenDeposit => ({
  checkoutSessionId: 's1',
  paymentAddress: evmToTron(`0x${'22'.repeat(20)}`),
  asset: {
    id: 'tron-local:usdt',
    chainId: 1,
    symbol: 'USDT',
    name: 'Tether',
    currency: 'usdt',
    address: token,
    decimals: 6,
  },
  credits,
  lastSweep: null,
  sweeps: [],
  sweeping: false,
});

test('the balance (at latest: Tron keeps no history) is compared with the credits of blocks up to the block read after it only: money seen after it does not hide money missing before it', async (t) => {
  // 150 held, block 15 read after; 50 of it credited at block 10, and 50 more credited from block 20 (after the read).
  const node = await fakeNode(t, 15, 150n);
  const adopted: ChainTransferMessage[] = [];
  const reconciler = createTronReconciler({
    network: 'tron-local',
    chainId: 1,
    rpcUrl: node.url,
    openDeposits: async () => [
      deposit([
        { amount: 50n, blockNumber: 10 },
        { amount: 50n, blockNumber: 20 },
      ]),
    ],
    adopt: async (transfers) => void adopted.push(...transfers),
    now: () => new Date('2026-01-01T00:00:00.000Z'),
    log: () => {},
  });
  await reconciler.step();
  t.is(adopted.length, 0, 'a shortfall is credited only once two passes agree');
  await reconciler.step();
  t.deepEqual(node.reads.slice(0, 2), ['eth_call latest', 'block latest'], 'the balance is read first, then the block');
  t.is(adopted.length, 1);
  t.like(adopted[0], { amount: '100', blockNumber: 15, from: 'reconciliation', to: deposit([]).paymentAddress });
  t.regex(adopted[0]!.transactionHash, /^reconciliation-[0-9a-f]{64}$/);
});

const reconcilerOn = (url: string, deposits: OpenDeposit[], adopted: ChainTransferMessage[]) =>
  createTronReconciler({
    network: 'tron-local',
    chainId: 1,
    rpcUrl: url,
    openDeposits: async () => deposits,
    adopt: async (transfers) => void adopted.push(...transfers),
    now: () => new Date('2026-01-01T00:00:00.000Z'),
    log: () => {},
  });

test('a swept deposit is still reconciled: its balance is compared with the credits from the last sweep on, and what came after it unseen is credited', async (t) => {
  // 100 credited at block 10 and swept at block 12; 30 credited at 13; 80 held: 50 came after the sweep unseen.
  const node = await fakeNode(t, 15, 80n);
  const adopted: ChainTransferMessage[] = [];
  const swept = {
    ...deposit([
      { amount: 100n, blockNumber: 10 },
      { amount: 30n, blockNumber: 13 },
    ]),
    lastSweep: { transactionHash: `0x${'5e'.repeat(32)}`, blockNumber: 12 },
  };
  const reconciler = reconcilerOn(node.url, [swept], adopted);
  await reconciler.step();
  await reconciler.step();
  t.deepEqual(
    node.reads.slice(0, 3),
    ['block latest', 'eth_call latest', 'block latest'],
    'the block before the balance too',
  );
  t.is(adopted.length, 1);
  t.like(adopted[0], { amount: '50', blockNumber: 15, from: 'reconciliation' });
  // Not the id an unswept deposit holding 80 would get: a balance may come again after each sweep.
  const unswept: ChainTransferMessage[] = [];
  const plain = reconcilerOn(node.url, [deposit([{ amount: 30n, blockNumber: 13 }])], unswept);
  await plain.step();
  await plain.step();
  t.is(unswept[0]?.amount, '50');
  t.not(unswept[0]!.transactionHash, adopted[0]!.transactionHash);
});

test('a deposit is left alone while its sweep is in flight, and while the balance may not show its last sweep yet', async (t) => {
  const node = await fakeNode(t, 15, 80n);
  const adopted: ChainTransferMessage[] = [];
  const credits = [{ amount: 100n, blockNumber: 10 }];
  const reconciler = reconcilerOn(
    node.url,
    [
      { ...deposit(credits), sweeping: true },
      // Recorded mined at block 16, past the block read before the balance (a Solidity node behind).
      { ...deposit(credits), lastSweep: { transactionHash: `0x${'5e'.repeat(32)}`, blockNumber: 16 } },
    ],
    adopted,
  );
  await reconciler.step();
  await reconciler.step();
  t.deepEqual(adopted, []);
  t.is(
    node.reads.filter((r) => r === 'eth_call latest').length,
    2,
    'the deposit whose sweep is in flight is not even read (one balance a pass)',
  );
});
