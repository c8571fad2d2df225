import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { toEventSelector, zeroAddress } from 'viem';
import type { OpenDeposit } from '../balance-reconciler.ts';
import type { ChainTransferMessage } from '../chain-messages.ts';
import { createEvmReconciler } from './reconciler.ts';

const DEPOSIT = `0x${'aB'.repeat(20)}`;
const SWEEP = `0x${'5e'.repeat(32)}`;
const FLUSHED = toEventSelector('event Flushed(address indexed token, address indexed merchant, uint256 amount)');
const word = (value: bigint | string) => `0x${value.toString(16).replace(/^0x/, '').padStart(64, '0')}`;

/** An archive node: balances at a block number, blocks by number (block n's hash is n as a word), and a sweep's receipt flushing `flushed`. */
async function fakeNode(t: { teardown(fn: () => unknown): void }, balance: bigint, flushed = 0n) {
  const reads: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      const { id, method, params } = JSON.parse(body) as { id: number; method: string; params: string[] };
      reads.push(`${method} ${params.join(' ')}`);
      const result =
        method === 'eth_getBlockByNumber'
          ? { number: params[0], hash: word(BigInt(params[0]!)) }
          : method === 'eth_getBalance'
            ? `0x${balance.toString(16)}`
            : {
                logs: [
                  {
                    address: DEPOSIT.toLowerCase(),
                    topics: [FLUSHED, word(zeroAddress), word(1n)],
                    data: word(flushed),
                  },
                  // Another deposit flushed in the same sweep: not this one's.
                  { address: `0x${'cd'.repeat(20)}`, topics: [FLUSHED, word(zeroAddress), word(1n)], data: word(7n) },
                ],
              };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, result }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, reads };
}

const deposit = (credits: OpenDeposit['credits'], more: Partial<OpenDeposit> = {}): OpenDeposit => ({
  checkoutSessionId: 's1',
  paymentAddress: DEPOSIT,
  asset: {
    id: 'devnet:eth',
    chainId: 31337,
    symbol: 'ETH',
    name: 'Ether',
    currency: 'eth',
    address: 'native',
    decimals: 18,
  },
  credits,
  lastSweep: null,
  sweeps: [],
  sweeping: false,
  ...more,
});

function reconcilerOn(url: string, deposits: () => OpenDeposit[], processed: bigint | null = 15n) {
  const adopted: ChainTransferMessage[] = [];
  const reconciler = createEvmReconciler({
    network: 'devnet',
    chainId: 31337,
    rpcUrl: url,
    processed: () => processed,
    openDeposits: async () => deposits(),
    adopt: async (transfers) => void adopted.push(...transfers),
    now: () => new Date('2026-01-01T00:00:00.000Z'),
    log: () => {},
  });
  return { reconciler, adopted };
}

test('the balance at the block the follower processed is compared with the credits up to it; a shortfall two passes agree on is credited in that block', async (t) => {
  // 150 held at block 15; 50 credited at block 10, 50 more at block 20 (after it: not counted).
  const node = await fakeNode(t, 150n);
  const credits = [
    { amount: 50n, blockNumber: 10 },
    { amount: 50n, blockNumber: 20 },
  ];
  const { reconciler, adopted } = reconcilerOn(node.url, () => [deposit(credits)]);
  await reconciler.step();
  t.deepEqual(adopted, [], 'a shortfall is credited only once two passes agree');
  await reconciler.step();
  t.deepEqual(node.reads.slice(0, 2), [
    'eth_getBlockByNumber 0xf false',
    `eth_getBalance ${DEPOSIT.toLowerCase()} 0xf`,
  ]);
  t.is(adopted.length, 1);
  t.like(adopted[0], {
    amount: '100',
    blockNumber: 15,
    blockHash: word(15n),
    from: 'reconciliation',
    to: DEPOSIT.toLowerCase(),
    logIndex: -1,
  });
  t.regex(adopted[0]!.transactionHash, /^reconciliation-[0-9a-f]{64}$/);
  // The same balance again: the same id, which the matcher records once.
  await reconciler.step();
  t.is(adopted[1]?.transactionHash, adopted[0]!.transactionHash);
});

test('money a sweep flushed before any pass saw it is found: balance plus what each sweep flushed (its receipt, read once) against every credit; what the sweep flushed is credited in its block, what is held in the processed one', async (t) => {
  // 50 credited at block 10; a sweep at block 12 flushed 80 (30 came unseen before it); 20 held now, unseen too.
  const node = await fakeNode(t, 20n, 80n);
  const sweep = { transactionHash: SWEEP, blockNumber: 12 };
  const { reconciler, adopted } = reconcilerOn(node.url, () => [
    deposit([{ amount: 50n, blockNumber: 10 }], { lastSweep: sweep, sweeps: [sweep] }),
  ]);
  await reconciler.step();
  await reconciler.step();
  t.is(adopted.length, 2);
  t.like(adopted[0], { amount: '30', blockNumber: 12, blockHash: word(12n), from: 'reconciliation' });
  t.like(adopted[1], { amount: '20', blockNumber: 15, blockHash: word(15n), from: 'reconciliation' });
  t.not(adopted[0]!.transactionHash, adopted[1]!.transactionHash);
  t.true(node.reads.includes('eth_getBlockByNumber 0xc false'), "the sweep's block is read for its hash");
  t.is(node.reads.filter((r) => r.startsWith('eth_getTransactionReceipt')).length, 1, 'a sweep receipt is read once');
});

test("money a sweep flushed, the deposit read empty since, is credited whole in the sweep's block (the sweeper finds it moved by that sweep); the same ids on each pass, and nothing more once one part is recorded", async (t) => {
  // 50 credited at block 10; the sweep at block 12 flushed 100 (50 came unseen); nothing held at block 15.
  const node = await fakeNode(t, 0n, 100n);
  const sweep = { transactionHash: SWEEP, blockNumber: 12 };
  let credits: OpenDeposit['credits'] = [{ amount: 50n, blockNumber: 10 }];
  const { reconciler, adopted } = reconcilerOn(node.url, () => [
    deposit(credits, { lastSweep: sweep, sweeps: [sweep] }),
  ]);
  await reconciler.step();
  await reconciler.step();
  await reconciler.step();
  t.is(adopted.length, 2);
  t.like(adopted[0], { amount: '50', blockNumber: 12, blockHash: word(12n) });
  t.deepEqual(adopted[1], adopted[0], 'a pass before the credit is recorded credits the same transfer');
  credits = [...credits, { amount: 50n, blockNumber: 12 }];
  await reconciler.step();
  await reconciler.step();
  t.is(adopted.length, 2);
});

test("credits after the last sweep's block are what the balance holds: the rest of a shortfall is what the sweep flushed, credited in its block", async (t) => {
  // 50 credited at block 10, 30 at block 14 (after the sweep at 12, which flushed 100): 30 held at 15. 50 missing, all flushed.
  const node = await fakeNode(t, 30n, 100n);
  const sweep = { transactionHash: SWEEP, blockNumber: 12 };
  const credits = [
    { amount: 50n, blockNumber: 10 },
    { amount: 30n, blockNumber: 14 },
  ];
  const { reconciler, adopted } = reconcilerOn(node.url, () => [
    deposit(credits, { lastSweep: sweep, sweeps: [sweep] }),
  ]);
  await reconciler.step();
  await reconciler.step();
  t.is(adopted.length, 1);
  t.like(adopted[0], { amount: '50', blockNumber: 12 });
});

test('a deposit is left alone while its sweep is in flight, while the processed block is before its last sweep, and before the follower processed a block; tokens are not read', async (t) => {
  const node = await fakeNode(t, 80n);
  const credits = [{ amount: 10n, blockNumber: 10 }];
  const later = { transactionHash: SWEEP, blockNumber: 16 };
  const usdc = deposit(credits);
  const { reconciler, adopted } = reconcilerOn(node.url, () => [
    deposit(credits, { sweeping: true }),
    deposit(credits, { lastSweep: later, sweeps: [later] }),
    { ...usdc, asset: { ...usdc.asset, address: `0x${'11'.repeat(20)}`, symbol: 'USDC' } },
  ]);
  await reconciler.step();
  await reconciler.step();
  t.deepEqual(adopted, []);
  t.is(
    node.reads.filter((r) => r.startsWith('eth_getBalance')).length,
    2,
    'one balance a pass: the swept-at-16 deposit',
  );
  const idle = reconcilerOn(node.url, () => [deposit([])], null);
  await idle.reconciler.step();
  await idle.reconciler.step();
  t.deepEqual(idle.adopted, []);
  t.is(node.reads.length, 4, 'no block processed yet: nothing read');
});

test('a transfer the follower saw and the matcher recorded between two passes is not credited again', async (t) => {
  // 100 held at block 15; the first pass sees 40 credited, the follower's other 60 (block 14) is recorded before the second.
  const node = await fakeNode(t, 100n);
  let credits = [{ amount: 40n, blockNumber: 9 }];
  const { reconciler, adopted } = reconcilerOn(node.url, () => [deposit(credits)]);
  await reconciler.step();
  credits = [...credits, { amount: 60n, blockNumber: 14 }];
  await reconciler.step();
  await reconciler.step();
  t.deepEqual(adopted, []);
});
