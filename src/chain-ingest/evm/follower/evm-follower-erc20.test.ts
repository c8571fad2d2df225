import test, { type ExecutionContext } from 'ava';
import { getAddress, parseEther, parseUnits, zeroAddress, type Address } from 'viem';
import { createInProcessBus } from '../../../bus/in-process-bus.ts';
import { transferId } from '../../chain-messages.ts';
import { createWatchedAddresses, type WatchedAddresses } from '../../watched-addresses.ts';
import { createInMemoryCheckpointStore } from './checkpoint.ts';
import { createEvmFollower, type EvmFollowerDeps } from './evm-follower.ts';
import {
  randomAddress,
  sleep,
  spyOnPublishes,
  startRpcProxy,
  startTestChain,
  transfersIn,
  waitUntil,
  type TestChain,
} from './follower-test-kit.ts';

let chain: TestChain | undefined;
let usdc: Address;
let dai: Address;

test.before(async () => {
  chain = await startTestChain();
  usdc = await chain.deployToken('USDC', 6);
  dai = await chain.deployToken('DAI', 18);
  const holder = getAddress('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266'); // hardhat account 0, the tokens' owner
  await chain.mintToken({ token: usdc, to: holder, amount: parseUnits('1000000', 6) });
  await chain.mintToken({ token: dai, to: holder, amount: parseEther('1000000') });
});

test.after.always(async () => {
  await chain?.stop();
});

const network = 'hardhat-erc20';

function hardhat(): TestChain {
  if (chain === undefined) throw new Error('the hardhat node did not start: see test.before');
  return chain;
}

function setUp(t: ExecutionContext, watched: WatchedAddresses, deps: Partial<EvmFollowerDeps> = {}) {
  const bus = createInProcessBus();
  const spy = spyOnPublishes(bus);
  const follower = createEvmFollower({
    network: {
      network,
      chainId: hardhat().node.chainId,
      confirmations: 2,
      tokens: [
        { address: usdc, symbol: 'USDC', decimals: 6 },
        { address: dai, symbol: 'DAI', decimals: 18 },
      ],
      nativeSymbol: 'ETH',
      nativeDecimals: 18,
    },
    rpc: { http: [hardhat().node.rpcUrl], ws: [] },
    bus: spy.bus,
    watched,
    checkpoints: createInMemoryCheckpointStore(),
    pollIntervalMs: 40,
    log: () => undefined,
    ...deps,
  });
  t.teardown(() => follower.stop());
  t.teardown(() => bus.close());
  return { follower, spy };
}

test.serial(
  'ERC-20 transfers and mints to a watched address are published with the token, log index and amount; others are not',
  async (t) => {
    const chain = hardhat();
    const watched = createWatchedAddresses();
    const payTo = randomAddress();
    const stranger = randomAddress();
    watched.add(network, payTo);
    const { follower, spy } = setUp(t, watched);
    await follower.start();
    await waitUntil('the first block', () => follower.status().processed !== null);

    const usdcPayment = await chain.sendToken({
      fromAccount: 0,
      token: usdc,
      to: payTo,
      amount: parseUnits('12.5', 6),
    });
    const daiPayment = await chain.sendToken({ fromAccount: 0, token: dai, to: payTo, amount: parseEther('3') });
    const mint = await chain.mintToken({ token: usdc, to: payTo, amount: 7n });
    const elsewhere = await chain.sendToken({ fromAccount: 0, token: usdc, to: stranger, amount: 1n });
    const zeroValue = await chain.sendToken({ fromAccount: 0, token: usdc, to: payTo, amount: 0n });
    await chain.mine(2);
    await waitUntil(
      'the follower at the head',
      async () => follower.status().processed === BigInt(await chain.blockNumber()),
    );
    await sleep(100);

    const transfers = transfersIn(spy.publications);
    t.deepEqual(
      transfers.map((transfer) => transfer.transactionHash),
      [usdcPayment.hash, daiPayment.hash, mint.hash],
      'the three transfers to the watched address, in chain order; not the one elsewhere nor the zero-value one',
    );
    t.like(transfers[0], {
      network,
      blockNumber: usdcPayment.blockNumber,
      blockHash: usdcPayment.blockHash,
      from: '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266',
      to: payTo.toLowerCase(),
      asset: { address: usdc, symbol: 'USDC', decimals: 6 },
      amount: '12500000',
      logIndex: 0,
    });
    t.like(transfers[1], { asset: { address: dai, symbol: 'DAI', decimals: 18 }, amount: parseEther('3').toString() });
    t.like(transfers[2], { from: zeroAddress, amount: '7' });
    t.false(
      transfers.some(
        (transfer) => transfer.transactionHash === elsewhere.hash || transfer.transactionHash === zeroValue.hash,
      ),
    );
    t.is(new Set(transfers.map((transfer) => transferId(transfer))).size, 3);
    // One eth_getLogs per new block once caught up, never one filter per address.
    const calls = follower.counters().rpc.calls;
    t.true((calls.eth_getLogs ?? 0) <= (calls.eth_getBlockByNumber ?? 0));
  },
);

test.serial('native value sent to a watched contract that reverts moved nothing and is not published', async (t) => {
  const chain = hardhat();
  const watched = createWatchedAddresses();
  watched.add(network, usdc); // the token contract has no payable fallback: sending it ETH reverts
  const payTo = randomAddress();
  watched.add(network, payTo);
  const { follower, spy } = setUp(t, watched);
  await follower.start();
  await waitUntil('the first block', () => follower.status().processed !== null);

  const reverted = await chain.sendNative({ fromAccount: 1, to: usdc, value: parseEther('1'), gas: 100_000n });
  t.false(reverted.succeeded);
  const paid = await chain.sendNative({ fromAccount: 1, to: payTo, value: 5n });
  await waitUntil('the good payment', () =>
    transfersIn(spy.publications).find((transfer) => transfer.transactionHash === paid.hash),
  );
  t.false(transfersIn(spy.publications).some((transfer) => transfer.transactionHash === reverted.hash));
  t.true(
    (follower.counters().rpc.calls.eth_getTransactionReceipt ?? 0) >= 2,
    'receipts only for candidates to watched addresses',
  );
});

test.serial(
  'a node that limits eth_getLogs ranges: the range halves until accepted, and every transfer is still published exactly once',
  async (t) => {
    const chain = hardhat();
    const limit = 8;
    const proxy = await startRpcProxy(chain.node.rpcUrl, (call) => {
      if (call.method !== 'eth_getLogs') return undefined;
      const filter = (call.params?.[0] ?? {}) as { fromBlock?: string; toBlock?: string };
      const span = Number(BigInt(filter.toBlock ?? '0x0') - BigInt(filter.fromBlock ?? '0x0')) + 1;
      return span > limit ? { code: -32005, message: `query exceeds max block range ${limit}` } : undefined;
    });
    t.teardown(() => proxy.close());

    const watched = createWatchedAddresses();
    const payTo = randomAddress();
    watched.add(network, payTo);
    const start = (await chain.blockNumber()) + 1;
    const paid = [];
    for (let round = 0; round < 6; round++) {
      paid.push(
        await chain.sendToken({
          fromAccount: 0,
          token: round % 2 === 0 ? usdc : dai,
          to: payTo,
          amount: BigInt(round + 1),
        }),
      );
      await chain.mine(7);
    }
    const head = await chain.blockNumber();

    const { follower, spy } = setUp(t, watched, {
      rpc: { http: [proxy.url], ws: [] },
      startBlock: BigInt(start),
      maxLogRange: 64n,
    });
    await follower.start();
    await waitUntil('the follower at the head', () => follower.status().processed === BigInt(head), 30_000);

    t.deepEqual(
      transfersIn(spy.publications).map((transfer) => transfer.transactionHash),
      paid.map((payment) => payment.hash),
    );
    t.true(proxy.refused.length >= 1, 'the node refused the wide ranges');
    t.true(follower.counters().logRange <= 2 * limit);
    t.is(follower.status().lastError, null, 'a refused range is handled, not an error');
  },
);

test.serial(
  'once caught up with a live WebSocket, a new block costs one eth_getBlockByNumber and one eth_getLogs, in one HTTP request',
  async (t) => {
    const chain = hardhat();
    const { follower } = setUp(t, createWatchedAddresses(), {
      rpc: { http: [chain.node.rpcUrl], ws: [chain.node.wsUrl] },
      pollIntervalMs: 60_000,
    });
    await follower.start();
    await waitUntil('the websocket', () => follower.status().headSource === 'websocket');
    await waitUntil('the first block', () => follower.status().processed !== null);
    const before = follower.counters().rpc;
    const blocks = 10;
    for (let mined = 0; mined < blocks; mined++) {
      await chain.mine(1);
      const head = await chain.blockNumber();
      await waitUntil(`block ${head}`, () => follower.status().processed === BigInt(head));
    }
    const after = follower.counters().rpc;
    const delta = (method: string) => (after.calls[method] ?? 0) - (before.calls[method] ?? 0);
    t.log(
      `per ${blocks} blocks: eth_getBlockByNumber ${delta('eth_getBlockByNumber')}, eth_getLogs ${delta('eth_getLogs')}, eth_blockNumber ${delta('eth_blockNumber')}, HTTP requests ${after.httpRequests - before.httpRequests}`,
    );
    t.is(delta('eth_getBlockByNumber'), blocks);
    t.is(delta('eth_getLogs'), blocks);
    t.is(delta('eth_blockNumber'), 0);
    t.is(after.httpRequests - before.httpRequests, blocks);
  },
);

test.serial(
  "a range answer that lacks a block's logs (a lagging log index, or another version of the chain) is caught by the block's bloom and asked again by block hash",
  async (t) => {
    const chain = hardhat();
    // This endpoint answers every eth_getLogs over a block range with nothing; by block hash it answers truly.
    const proxy = await startRpcProxy(
      chain.node.rpcUrl,
      () => undefined,
      (call, answer) => {
        const filter = (call.params?.[0] ?? {}) as { fromBlock?: string };
        return call.method === 'eth_getLogs' && filter.fromBlock !== undefined ? { ...answer, result: [] } : answer;
      },
    );
    t.teardown(() => proxy.close());
    const watched = createWatchedAddresses();
    const payTo = randomAddress();
    watched.add(network, payTo);
    const { follower, spy } = setUp(t, watched, { rpc: { http: [proxy.url], ws: [] } });
    await follower.start();
    await waitUntil('the first block', () => follower.status().processed !== null);
    const paid = await chain.sendToken({ fromAccount: 0, token: usdc, to: payTo, amount: 42n });
    const emptyBlocks = 3;
    await chain.mine(emptyBlocks);
    await waitUntil(
      'the follower at the head',
      async () => follower.status().processed === BigInt(await chain.blockNumber()),
    );

    t.deepEqual(
      transfersIn(spy.publications).map((transfer) => [transfer.transactionHash, transfer.amount]),
      [[paid.hash, '42']],
    );
    t.is(
      follower.counters().bloomRechecks,
      1,
      'only the block whose bloom names a token and Transfer is asked again, not the empty ones',
    );
  },
);
