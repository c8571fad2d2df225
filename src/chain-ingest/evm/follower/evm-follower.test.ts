import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import test, { type ExecutionContext } from 'ava';
import { parseEther } from 'viem';
import { createInProcessBus } from '../../../bus/in-process-bus.ts';
import { openTracing } from '../../../shared/tracing.ts';
import { createWatchedAddresses, type WatchedAddresses } from '../../watched-addresses.ts';
import { createInMemoryCheckpointStore, type CheckpointStore } from './checkpoint.ts';
import { createEvmFollower, type EvmFollower, type EvmFollowerDeps } from './evm-follower.ts';
import {
  consumeChainMessages,
  finalsIn,
  randomAddress,
  reorgsIn,
  sleep,
  spyOnPublishes,
  startRpcProxy,
  startTestChain,
  transfersIn,
  waitUntil,
  type TestChain,
} from './follower-test-kit.ts';

// One hardhat node for this file; the tests run one after another and each starts its own
// follower at the chain's current head, so what earlier tests did to the chain does not matter.
let chain: TestChain | undefined;

test.before(async () => {
  chain = await startTestChain();
});

test.after.always(async () => {
  await chain?.stop();
});

const network = 'hardhat-follower';

function setUp(
  t: ExecutionContext,
  options: {
    confirmations: number;
    checkpoints?: CheckpointStore;
    watched?: WatchedAddresses;
    deps?: Partial<EvmFollowerDeps>;
  },
) {
  if (chain === undefined) throw new Error('the hardhat node did not start: see test.before');
  const bus = createInProcessBus();
  const spy = spyOnPublishes(bus);
  const watched = options.watched ?? createWatchedAddresses();
  const checkpoints = options.checkpoints ?? createInMemoryCheckpointStore();
  const lines: string[] = [];
  const follower = createEvmFollower({
    network: {
      network,
      chainId: chain.node.chainId,
      confirmations: options.confirmations,
      tokens: [],
      nativeSymbol: 'ETH',
      nativeDecimals: 18,
    },
    rpc: { http: [chain.node.rpcUrl], ws: [] },
    bus: spy.bus,
    watched,
    checkpoints,
    pollIntervalMs: 40,
    log: (line) => lines.push(line),
    ...options.deps,
  });
  t.teardown(() => follower.stop());
  t.teardown(() => bus.close());
  return { chain, bus, spy, watched, checkpoints, follower, lines };
}

async function started(follower: EvmFollower): Promise<bigint> {
  await follower.start();
  return waitUntil('the follower to process its first block', () => follower.status().processed ?? undefined);
}

test.serial(
  'a native payment to a watched address is published once, with its amount, hash and block; one to an unwatched address is not',
  async (t) => {
    const spans = new InMemorySpanExporter();
    const tracing = (await openTracing({ exporter: spans }))!;
    t.teardown(() => tracing.shutdown());
    const { chain, bus, spy, watched, follower } = setUp(t, { confirmations: 2, deps: { tracer: tracing.tracer } });
    const payTo = randomAddress();
    const stranger = randomAddress();
    watched.add(network, payTo);
    await started(follower);

    const paid = await chain.sendNative({ fromAccount: 1, to: payTo, value: parseEther('1.25') });
    const ignored = await chain.sendNative({ fromAccount: 1, to: stranger, value: parseEther('3') });
    await chain.mine(2);
    await waitUntil('the final of the payment block', () =>
      finalsIn(spy.publications).find((final) => final.blockNumber === paid.blockNumber),
    );
    await waitUntil(
      'the follower to reach the head',
      async () => follower.status().processed === BigInt(await chain.blockNumber()),
    );

    const transfers = transfersIn(spy.publications);
    t.is(transfers.length, 1, 'exactly one transfer publication');
    const [transfer] = transfers;
    t.like(transfer, {
      type: 'transfer',
      network,
      chainId: chain.node.chainId,
      transactionHash: paid.hash,
      logIndex: -1,
      blockNumber: paid.blockNumber,
      blockHash: paid.blockHash,
      to: payTo.toLowerCase(),
      amount: parseEther('1.25').toString(),
      asset: { address: 'native', symbol: 'ETH', decimals: 18 },
      reference: null,
    });
    t.false(
      transfers.some((message) => message.transactionHash === ignored.hash),
      'the unwatched payment is not published',
    );
    // Each batch of blocks synced is a span naming its network and range; one holds the payment's block.
    const batches = spans.getFinishedSpans().filter((span) => span.name === 'follower batch');
    t.true(
      batches.some(
        (span) =>
          span.attributes['weir.network'] === network &&
          Number(span.attributes['weir.block.first']) <= paid.blockNumber &&
          paid.blockNumber <= Number(span.attributes['weir.block.last']),
      ),
      JSON.stringify(batches.map((span) => span.attributes)),
    );

    // What consumers see on the bus, read through a durable consumer.
    const consumer = await consumeChainMessages(bus);
    t.teardown(() => consumer.stop());
    await waitUntil('the consumer to read the transfer and the final', () => consumer.messages.length >= 2);
    t.deepEqual(
      consumer.messages.map((message) => message.type),
      ['transfer', 'final'],
    );
    t.like(consumer.messages[1], { type: 'final', blockNumber: paid.blockNumber, blockHash: paid.blockHash });
  },
);

test.serial('final is published only once the block has `confirmations` blocks, counting itself', async (t) => {
  const { chain, spy, watched, follower } = setUp(t, { confirmations: 4 });
  const payTo = randomAddress();
  watched.add(network, payTo);
  await started(follower);

  const paid = await chain.sendNative({ fromAccount: 2, to: payTo, value: 1n });
  await waitUntil('the transfer', () =>
    transfersIn(spy.publications).find((transfer) => transfer.transactionHash === paid.hash),
  );
  t.is(follower.status().pendingFinal, 1);

  await chain.mine(2); // 3 confirmations
  await waitUntil(
    'the follower to process the new blocks',
    () => follower.status().processed === BigInt(paid.blockNumber + 2),
  );
  await sleep(200);
  t.deepEqual(finalsIn(spy.publications), [], 'no final with 3 of 4 confirmations');

  await chain.mine(1); // 4 confirmations
  const final = await waitUntil('the final', () => finalsIn(spy.publications)[0]);
  t.like(final, { blockNumber: paid.blockNumber, blockHash: paid.blockHash });
  const order = spy.publications.map((publication) => publication.message.type);
  t.deepEqual(order, ['transfer', 'final'], 'the transfer goes out before the final that covers it');
  t.is(follower.status().pendingFinal, 0);
});

test.serial(
  'a reorg before finality removes the transfer: one reorg message, its transfer never final, the new branch transfer published and final',
  async (t) => {
    const { chain, spy, watched, follower } = setUp(t, { confirmations: 3 });
    const payTo = randomAddress();
    watched.add(network, payTo);
    await started(follower);

    const fork = await chain.snapshot();
    const orphaned = await chain.sendNative({ fromAccount: 3, to: payTo, value: parseEther('1') });
    await waitUntil('the orphaned transfer', () =>
      transfersIn(spy.publications).find((transfer) => transfer.transactionHash === orphaned.hash),
    );

    await chain.revert(fork);
    const replacement = await chain.sendNative({ fromAccount: 4, to: payTo, value: parseEther('2') });
    t.is(replacement.blockNumber, orphaned.blockNumber, 'the new branch has a block at the same height');
    t.not(replacement.blockHash, orphaned.blockHash);
    await chain.mine(1);

    const reorg = await waitUntil('the reorg message', () => reorgsIn(spy.publications)[0]);
    t.deepEqual(reorg.removedBlocks, [{ number: orphaned.blockNumber, hash: orphaned.blockHash }]);
    await waitUntil('the new branch transfer', () =>
      transfersIn(spy.publications).find((transfer) => transfer.transactionHash === replacement.hash),
    );

    await chain.mine(2);
    const final = await waitUntil('the final of the height', () =>
      finalsIn(spy.publications).find((message) => message.blockNumber === orphaned.blockNumber),
    );
    t.is(final.blockHash, replacement.blockHash, 'the final names the canonical block');
    await sleep(200);

    t.is(reorgsIn(spy.publications).length, 1, 'one reorg message');
    t.false(
      finalsIn(spy.publications).some((message) => message.blockHash === orphaned.blockHash),
      'the orphaned block is never final',
    );
    const sequence = spy.publications.map(({ message }) =>
      message.type === 'transfer'
        ? `transfer ${message.transactionHash === orphaned.hash ? 'orphaned' : 'replacement'}`
        : message.type,
    );
    t.deepEqual(sequence, ['transfer orphaned', 'reorg', 'transfer replacement', 'final']);
    t.like(transfersIn(spy.publications)[1], { blockHash: replacement.blockHash, amount: parseEther('2').toString() });
  },
);

test.serial(
  'a height whose transfer was orphaned still gets its final (with the new canonical hash) when the new branch has no transfer there',
  async (t) => {
    const { chain, spy, watched, follower } = setUp(t, { confirmations: 2 });
    const payTo = randomAddress();
    watched.add(network, payTo);
    await started(follower);

    const fork = await chain.snapshot();
    const orphaned = await chain.sendNative({ fromAccount: 5, to: payTo, value: 7n });
    await waitUntil('the orphaned transfer', () => transfersIn(spy.publications)[0]);
    await chain.revert(fork);
    await chain.mine(4);

    const reorg = await waitUntil('the reorg message', () => reorgsIn(spy.publications)[0]);
    t.deepEqual(reorg.removedBlocks, [{ number: orphaned.blockNumber, hash: orphaned.blockHash }]);
    const final = await waitUntil('the final of the orphaned height', () => finalsIn(spy.publications)[0]);
    const canonical = await chain.block(orphaned.blockNumber);
    t.deepEqual(
      { number: final.blockNumber, hash: final.blockHash },
      { number: orphaned.blockNumber, hash: canonical.hash },
    );
    t.not(canonical.hash, orphaned.blockHash);
    t.is(transfersIn(spy.publications).length, 1);
    t.is(follower.status().pendingFinal, 0);
  },
);

test.serial(
  'a crash after publishing a transfer but before the checkpoint moved on: after a restart, its reorg is still reported (write-ahead checkpoint)',
  async (t) => {
    if (chain === undefined) throw new Error('no chain');
    const durable = createInMemoryCheckpointStore();
    // This store refuses every checkpoint that marks a block with transfers as processed: the
    // follower publishes the transfer and then cannot move on, as if it crashed right there.
    const crashing: CheckpointStore = {
      get: (name) => durable.get(name),
      async set(name, checkpoint) {
        if (checkpoint.window.some((block) => block.transfers && block.number < checkpoint.nextBlock))
          throw new Error('disk full (test)');
        await durable.set(name, checkpoint);
      },
    };
    const watched = createWatchedAddresses();
    const payTo = randomAddress();
    watched.add(network, payTo);
    const first = setUp(t, { confirmations: 3, checkpoints: crashing, watched });
    await started(first.follower);

    const fork = await chain.snapshot();
    const orphaned = await chain.sendNative({ fromAccount: 6, to: payTo, value: 99n });
    await waitUntil('the transfer', () => transfersIn(first.spy.publications)[0]);
    await waitUntil('the failed checkpoint', () => first.follower.status().lastError?.includes('disk full') ?? false);
    await first.follower.stop();

    const stored = await durable.get(network);
    t.is(stored?.nextBlock, orphaned.blockNumber, 'the stored checkpoint has not moved past the block');
    t.like(stored?.window.at(-1), { number: orphaned.blockNumber, hash: orphaned.blockHash, transfers: true });

    await chain.revert(fork);
    await chain.mine(4);
    const second = setUp(t, { confirmations: 3, checkpoints: durable, watched });
    await second.follower.start();
    const reorg = await waitUntil('the reorg message after the restart', () => reorgsIn(second.spy.publications)[0]);
    t.deepEqual(reorg.removedBlocks, [{ number: orphaned.blockNumber, hash: orphaned.blockHash }]);
    const final = await waitUntil('the final of the orphaned height', () => finalsIn(second.spy.publications)[0]);
    t.is(final.blockNumber, orphaned.blockNumber);
    t.not(final.blockHash, orphaned.blockHash);
    t.deepEqual(transfersIn(second.spy.publications), [], 'nothing to publish on the new branch');
  },
);

test.serial('a restart from the checkpoint republishes nothing and goes on from where it stopped', async (t) => {
  if (chain === undefined) throw new Error('no chain');
  const checkpoints = createInMemoryCheckpointStore();
  const watched = createWatchedAddresses();
  const payTo = randomAddress();
  watched.add(network, payTo);
  const first = setUp(t, { confirmations: 2, checkpoints, watched });
  await started(first.follower);
  const before = await chain.sendNative({ fromAccount: 7, to: payTo, value: 5n });
  await chain.mine(1);
  await waitUntil('the first final', () => finalsIn(first.spy.publications)[0]);
  await first.follower.stop();
  t.false(first.follower.status().running);

  const during = await chain.sendNative({ fromAccount: 7, to: payTo, value: 6n });
  const second = setUp(t, { confirmations: 2, checkpoints, watched });
  await second.follower.start();
  await chain.mine(1);
  await waitUntil('the second final', () => finalsIn(second.spy.publications)[0]);
  t.deepEqual(
    transfersIn(second.spy.publications).map((transfer) => transfer.transactionHash),
    [during.hash],
  );
  t.false(
    second.spy.publications.some(
      ({ message }) => message.type === 'transfer' && message.transactionHash === before.hash,
    ),
  );
});

test.serial('start() refuses a checkpoint of another chain, and a second start()', async (t) => {
  if (chain === undefined) throw new Error('no chain');
  const checkpoints = createInMemoryCheckpointStore([
    {
      version: 1,
      network,
      chainId: 1,
      nextBlock: 5,
      lastProcessed: null,
      window: [],
      orphanedHeights: [],
      updatedAt: new Date().toISOString(),
    },
  ]);
  const { follower } = setUp(t, { confirmations: 1, checkpoints });
  await t.throwsAsync(() => follower.start(), { name: 'CheckpointMismatchError', message: /chain id 1.*31337/ });
  await t.throwsAsync(() => follower.start(), { name: 'EvmFollowerStateError' });
});

test.serial(
  'with a WebSocket, a same-height reorg (a sibling of the processed head) is seen from the announced head alone',
  async (t) => {
    if (chain === undefined) throw new Error('no chain');
    const { spy, watched, follower } = setUp(t, {
      confirmations: 3,
      deps: { rpc: { http: [chain.node.rpcUrl], ws: [chain.node.wsUrl] }, pollIntervalMs: 60_000 },
    });
    const payTo = randomAddress();
    watched.add(network, payTo);
    await follower.start();
    await waitUntil('the websocket', () => follower.status().headSource === 'websocket');
    await waitUntil('the first block', () => follower.status().processed !== null);

    const fork = await chain.snapshot();
    const orphaned = await chain.sendNative({ fromAccount: 8, to: payTo, value: 1n });
    await waitUntil('the orphaned transfer', () => transfersIn(spy.publications)[0]);
    await chain.revert(fork);
    const sibling = await chain.sendNative({ fromAccount: 9, to: payTo, value: 2n });
    t.is(sibling.blockNumber, orphaned.blockNumber);

    const reorg = await waitUntil('the reorg message, with no block mined on top', () => reorgsIn(spy.publications)[0]);
    t.deepEqual(reorg.removedBlocks, [{ number: orphaned.blockNumber, hash: orphaned.blockHash }]);
    await waitUntil('the sibling transfer', () =>
      transfersIn(spy.publications).find((transfer) => transfer.blockHash === sibling.blockHash),
    );
    t.is(await chain.blockNumber(), sibling.blockNumber, 'no block was mined on top of the sibling');
  },
);

test.serial(
  'an endpoint that serves blocks that do not chain: no busy loop, the error is logged and retried with backoff, and following resumes once it heals',
  async (t) => {
    if (chain === undefined) throw new Error('no chain');
    const live = chain;
    let corrupt: number | undefined;
    const proxy = await startRpcProxy(
      live.node.rpcUrl,
      () => undefined,
      (call, answer) => {
        const block = answer.result as { number?: string; parentHash?: string } | null | undefined;
        if (
          call.method !== 'eth_getBlockByNumber' ||
          block === null ||
          block === undefined ||
          corrupt === undefined ||
          block.number !== `0x${corrupt.toString(16)}`
        )
          return answer;
        return { ...answer, result: { ...block, parentHash: `0x${'0'.repeat(64)}` } };
      },
    );
    t.teardown(() => proxy.close());
    const start = await live.blockNumber();
    corrupt = start + 2;
    const { spy, watched, follower, lines } = setUp(t, {
      confirmations: 1,
      deps: { rpc: { http: [proxy.url], ws: [] }, startBlock: BigInt(start), maxBackoffMs: 300 },
    });
    const payTo = randomAddress();
    watched.add(network, payTo);
    await live.mine(2);
    const paid = await live.sendNative({ fromAccount: 0, to: payTo, value: 3n });
    await follower.start();

    await waitUntil(
      'the follower to stop at the broken block',
      () =>
        follower.status().processed === BigInt(start + 1) &&
        (follower.status().lastError?.includes('do not chain') ?? false),
    );
    const readsBefore = follower.counters().rpc.calls.eth_getBlockByNumber ?? 0;
    await sleep(1_000);
    const reads = (follower.counters().rpc.calls.eth_getBlockByNumber ?? 0) - readsBefore;
    t.true(reads < 40, `${reads} block reads in a second: it backs off`);
    t.deepEqual(transfersIn(spy.publications), []);
    t.true(lines.some((line) => line.includes('retrying in')));

    corrupt = undefined;
    await waitUntil('the payment once the endpoint heals', () =>
      transfersIn(spy.publications).find((transfer) => transfer.transactionHash === paid.hash),
    );
    t.is(reorgsIn(spy.publications).length, 0, 'a block that does not chain is no reorg');
  },
);

test.serial(
  'ready: not before a first start has saved the head it starts from, at once with a checkpoint, and on stop',
  async (t) => {
    const { chain } = setUp(t, { confirmations: 1 });
    let nodeAnswers = false;
    const proxy = await startRpcProxy(chain.node.rpcUrl, (call) =>
      nodeAnswers || call.method !== 'eth_blockNumber' ? undefined : { code: -32000, message: 'node still starting' },
    );
    t.teardown(() => proxy.close());
    // A checkpoint store whose writes wait for the test's go, so "saved" and "ready" can be told apart.
    const stored = createInMemoryCheckpointStore();
    let allowWrites: () => void = () => {};
    const writesAllowed = new Promise<void>((resolve) => {
      allowWrites = resolve;
    });
    let writeAsked = false;
    const checkpoints: CheckpointStore = {
      get: (name) => stored.get(name),
      async set(name, checkpoint) {
        writeAsked = true;
        await writesAllowed;
        await stored.set(name, checkpoint);
      },
    };
    const { follower } = setUp(t, {
      confirmations: 1,
      checkpoints,
      deps: { rpc: { http: [proxy.url], ws: [] }, maxBackoffMs: 50 },
    });
    const seen: { savedWhenReady: number | null } = { savedWhenReady: null };
    void follower.ready().then(() => {
      seen.savedWhenReady = stored.history(network).length;
    });
    await follower.start();

    // Without a head there is no starting point yet: not ready.
    await waitUntil(
      'a few refused head requests',
      () => proxy.refused.filter((call) => call.method === 'eth_blockNumber').length >= 3,
    );
    t.is(seen.savedWhenReady, null);
    // With a head, but its starting point not yet written: still not ready.
    nodeAnswers = true;
    const head = await chain.blockNumber();
    await waitUntil('the first checkpoint write to begin', () => writeAsked);
    await sleep(100);
    t.is(seen.savedWhenReady, null, 'not ready while the starting point is being written');
    allowWrites();
    await follower.ready();
    t.is(seen.savedWhenReady, 1, 'ready once the starting point is saved');
    t.true(stored.history(network)[0]!.nextBlock >= Number(head), 'it starts at the head it read');
    await follower.stop();

    // The next start resumes from that checkpoint: ready at once, even while the node answers nothing.
    nodeAnswers = false;
    const again = setUp(t, {
      confirmations: 1,
      checkpoints: stored,
      deps: { rpc: { http: [proxy.url], ws: [] }, maxBackoffMs: 50 },
    });
    await again.follower.start();
    await again.follower.ready();
    await again.follower.stop();

    // A follower stopped before it ever had a starting point does not keep its waiters waiting.
    const never = setUp(t, {
      confirmations: 1,
      checkpoints: createInMemoryCheckpointStore(),
      deps: { rpc: { http: [proxy.url], ws: [] }, maxBackoffMs: 50 },
    });
    await never.follower.start();
    await never.follower.stop();
    await never.follower.ready();
    t.pass();
  },
);
