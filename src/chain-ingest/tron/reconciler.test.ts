import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import type { ChainTransferMessage } from '../chain-messages.ts';
import { evmToTron } from './address.ts';
import { createTronReconciler, type OpenDeposit } from './reconciler.ts';

/** A node answering the reconciler's three calls: the finalized block, and a balance read at it. */
async function fakeNode(t: { teardown(fn: () => unknown): void }, finalized: number, balance: bigint) {
  const reads: unknown[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      const { id, method, params } = JSON.parse(body) as { id: number; method: string; params: unknown[] };
      let result: unknown;
      if (method === 'eth_getBlockByNumber')
        result = { number: `0x${finalized.toString(16)}`, hash: `0x${'ab'.repeat(32)}` };
      else {
        reads.push(params[1]);
        result = `0x${balance.toString(16).padStart(64, '0')}`;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, result }));
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
  swept: false,
});

test('the balance at the finalized block is compared with the credits of blocks up to it only: money seen after it does not hide money missing before it', async (t) => {
  // 150 held at block 15; 50 of it credited at block 10, and 50 more credited from block 20 (after the read).
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
  t.is(node.reads[0], '0xf', 'the balance is read at the finalized block');
  t.is(adopted.length, 1);
  t.like(adopted[0], { amount: '100', blockNumber: 15, from: 'reconciliation', to: deposit([]).paymentAddress });
  t.regex(adopted[0]!.transactionHash, /^reconciliation-[0-9a-f]{64}$/);
});
