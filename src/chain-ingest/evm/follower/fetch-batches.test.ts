import test from 'ava';
import { createWatchedAddresses } from '../../watched-addresses.ts';
import { createBatchFetcher } from './fetch-batches.ts';
import { createAdaptiveRange } from './get-transfer-logs.ts';
import type { RpcEndpoints } from './rpc-endpoints.ts';

const h = (number: number): string => `0x${(number + 1).toString(16).padStart(64, '0')}`;
const TOKEN = '0x00000000000000000000000000000000000a11ce';

/**
 * A node with blocks 0..`height` whose answers are held until the test lets them go, so that the
 * order in which the fetcher asks is visible.
 */
function fakeNode(height: number) {
  const asked: string[] = [];
  const held: (() => void)[] = [];
  let holding = false;
  const answer = (method: string, params: readonly unknown[]): unknown => {
    if (method === 'eth_getBlockByNumber') {
      const number = Number(BigInt(params[0] as string));
      if (number > height) return null;
      return { number: params[0], hash: h(number), parentHash: h(number - 1), transactions: [] };
    }
    if (method === 'eth_getLogs') return [];
    throw new Error(`unexpected ${method}`);
  };
  const rpc: RpcEndpoints = {
    request(method, params) {
      asked.push(
        method === 'eth_getLogs'
          ? `logs ${Number(BigInt((params[0] as { fromBlock: string }).fromBlock))}..${Number(BigInt((params[0] as { toBlock: string }).toBlock))}`
          : `block ${Number(BigInt(params[0] as string))}`,
      );
      const value = answer(method, params);
      if (!holding) return Promise.resolve(value);
      return new Promise((resolve) => held.push(() => resolve(value)));
    },
    current: () => 'http://127.0.0.1:1',
    counters: () => ({
      calls: {},
      httpRequests: 0,
      failures: { timeout: 0, unreachable: 0, rejected: 0 },
      endpointSwitches: 0,
    }),
  };
  return {
    rpc,
    asked,
    hold(on: boolean) {
      holding = on;
    },
    release() {
      for (const resolve of held.splice(0)) resolve();
    },
  };
}

const fetcherFor = (rpc: RpcEndpoints, tokens = true, maxLogRange = 10) =>
  createBatchFetcher({
    rpc,
    network: 'testnet',
    tokens: tokens ? [{ address: TOKEN, symbol: 'USDC', decimals: 6 }] : [],
    watched: createWatchedAddresses(),
    blockBatchSize: 4,
    logRange: createAdaptiveRange(maxLogRange),
    signal: new AbortController().signal,
    log: () => {},
  });

test('batches come in order, and the next one is already being read while the caller holds the current one', async (t) => {
  const node = fakeNode(100);
  const fetcher = fetcherFor(node.rpc);
  const batches = fetcher.batches(0, () => 11);
  const first = await batches.next();
  t.deepEqual(first.value && [first.value.from, first.value.to], [0, 3]);
  // Before the caller asks for the second batch, its blocks have been asked for (one eth_getLogs serves 0..9).
  t.deepEqual(node.asked, [
    'logs 0..9',
    'block 0',
    'block 1',
    'block 2',
    'block 3',
    'block 4',
    'block 5',
    'block 6',
    'block 7',
  ]);
  const second = await batches.next();
  t.deepEqual(second.value && [second.value.from, second.value.to], [4, 7]);
  t.true(node.asked.includes('block 8'), 'the third is read ahead in turn');
  t.false(node.asked.includes('block 12'), 'one batch ahead, never more');
  const third = await batches.next();
  t.deepEqual(third.value && [third.value.from, third.value.to], [8, 9], 'a batch stops at its log range');
  const fourth = await batches.next();
  t.deepEqual(fourth.value && [fourth.value.from, fourth.value.to], [10, 11]);
  t.true(node.asked.includes('logs 10..11'), 'a new log range for the blocks past the first');
  t.true((await batches.next()).done);
  t.is(fetcher.counters().blocksRead, 12);
});

test('a short batch (the endpoint has no more blocks yet) is not followed by a read ahead', async (t) => {
  const node = fakeNode(5);
  const fetcher = fetcherFor(node.rpc, false);
  const batches = fetcher.batches(4, () => 20);
  const first = await batches.next();
  t.is(first.value?.blocks.length, 2);
  t.true((await batches.next()).done);
  t.deepEqual(node.asked, ['block 4', 'block 5', 'block 6', 'block 7']);
});

test('leaving early (a reorg in the current batch) waits for the read ahead, so nothing stays in flight', async (t) => {
  const node = fakeNode(100);
  const fetcher = fetcherFor(node.rpc, false);
  const batches = fetcher.batches(0, () => 50);
  await batches.next();
  node.hold(true);
  // The read ahead of 4..7 was sent before holding; ask for the second batch, whose own read ahead is held.
  const second = await batches.next();
  t.is(second.value?.from, 4);
  let returned = false;
  const leaving = batches.return(undefined).then(() => {
    returned = true;
  });
  await new Promise((resolve) => setImmediate(resolve));
  t.false(returned, 'still waiting for the blocks of 8..11');
  node.release();
  await leaving;
  t.true(returned);
});

test('each batch waits, once its blocks and logs are read, for the watched addresses to be current; a refusal fails the batch', async (t) => {
  const node = fakeNode(100);
  const calls: string[] = [];
  let refuse = false;
  const fetcher = createBatchFetcher({
    rpc: node.rpc,
    network: 'testnet',
    tokens: [{ address: TOKEN, symbol: 'USDC', decimals: 6 }],
    watched: createWatchedAddresses(),
    blockBatchSize: 4,
    logRange: createAdaptiveRange(10),
    signal: new AbortController().signal,
    log: () => {},
    async watchedCurrent() {
      // What the node had been asked when the fetcher asked: the batch's blocks and logs, all read.
      calls.push(node.asked.join(','));
      if (refuse) throw new Error('read models behind');
    },
  });
  const batches = fetcher.batches(0, () => 3);
  const first = await batches.next();
  t.deepEqual(first.value && [first.value.from, first.value.to], [0, 3]);
  t.deepEqual(calls, ['logs 0..3,block 0,block 1,block 2,block 3']);
  await batches.return(undefined);

  refuse = true;
  await t.throwsAsync(fetcher.batches(4, () => 7).next(), { message: 'read models behind' });
});

test('a receipt whose value is not the native coin keeps its own status and says so apart (a TRC-10 transfer did not fail)', async (t) => {
  const receipt = (hash: string) => ({ transactionHash: hash, blockHash: h(5), blockNumber: '0x5', status: '0x1' });
  const asked: string[][] = [];
  const rpc: RpcEndpoints = {
    ...fakeNode(10).rpc,
    request: async (method, params) => {
      if (method !== 'eth_getTransactionReceipt') throw new Error(`unexpected ${method}`);
      const hash = String(params[0]);
      return hash === h(3) ? { ...receipt(hash), status: '0x0' } : receipt(hash);
    },
  };
  const fetcher = createBatchFetcher({
    rpc,
    network: 'testnet',
    tokens: [],
    watched: createWatchedAddresses(),
    blockBatchSize: 4,
    logRange: createAdaptiveRange(10),
    signal: new AbortController().signal,
    log: () => {},
    nativeTransfers: async (hashes) => {
      asked.push([...hashes]);
      return new Set([h(1)]);
    },
  });
  const receipts = await fetcher.receipts([h(1), h(2), h(3)]);
  t.like(receipts.get(h(1)), { succeeded: true });
  t.is(receipts.get(h(1))?.nonNativeValue, undefined);
  t.like(receipts.get(h(2)), { succeeded: true, nonNativeValue: true }, 'a TRC-10 transfer: succeeded, not TRX');
  t.like(receipts.get(h(3)), { succeeded: false });
  t.is(receipts.get(h(3))?.nonNativeValue, undefined, 'a failed one is not asked about');
  t.deepEqual(asked, [[h(1), h(2)]]);
});
