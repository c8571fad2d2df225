import test, { type ExecutionContext } from 'ava';
import type { Address } from 'viem';
import { createInProcessBus } from '../../../bus/in-process-bus.ts';
import type { Bus } from '../../../bus/bus.ts';
import type { ChainTransferMessage } from '../../chain-messages.ts';
import { createWatchedAddresses } from '../../watched-addresses.ts';
import { createInMemoryCheckpointStore, type CheckpointStore } from './checkpoint.ts';
import { createEvmFollower, type EvmFollower } from './evm-follower.ts';
import { EvmFollowerStateError } from './errors.ts';
import {
  finalsIn,
  randomAddress,
  reorgsIn,
  spyOnPublishes,
  startTestChain,
  transfersIn,
  waitUntil,
  type Mined,
  type TestChain,
} from './follower-test-kit.ts';

/**
 * Transfers a payment recovery hands to the follower (`adoptTransfers`): they are the follower's
 * own from then on, so their block gets its `final` (or its `reorg`) without another recovery,
 * also after a restart in between. The paid addresses are never watched: the follower passes
 * these blocks without seeing anything, as it did for the payments that needed a recovery.
 */

let chain: TestChain | undefined;

test.before(async () => {
  chain = await startTestChain();
});

test.after.always(async () => {
  await chain?.stop();
});

const network = 'hardhat-adopt';

function followerOn(t: ExecutionContext, options: { confirmations: number; checkpoints: CheckpointStore; bus: Bus }) {
  if (chain === undefined) throw new Error('the hardhat node did not start: see test.before');
  const spy = spyOnPublishes(options.bus);
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
    watched: createWatchedAddresses(),
    checkpoints: options.checkpoints,
    pollIntervalMs: 40,
    log: () => {},
  });
  t.teardown(() => follower.stop());
  return { follower, spy, chain };
}

function world(t: ExecutionContext) {
  const bus = createInProcessBus();
  t.teardown(() => bus.close());
  return { bus, checkpoints: createInMemoryCheckpointStore() };
}

/** The transfer message the recovery builds for a native payment (the follower's own extraction). */
const recovered = (paid: Mined, to: Address): ChainTransferMessage => ({
  type: 'transfer',
  network,
  chainId: chain!.node.chainId,
  transactionHash: paid.hash,
  logIndex: -1,
  blockNumber: paid.blockNumber,
  blockHash: paid.blockHash,
  from: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8',
  to: to.toLowerCase(),
  asset: { address: 'native', symbol: 'ETH', decimals: 18 },
  amount: '5',
  reference: null,
  observedAt: new Date().toISOString(),
});

async function processedThrough(follower: EvmFollower, number: number): Promise<void> {
  await waitUntil(
    `the follower to process block ${number}`,
    () => (follower.status().processed ?? -1n) >= BigInt(number),
  );
}

test.serial(
  'a transfer adopted in a block the follower passed is published, and its block gets its final once it has the confirmations, after a restart in between',
  async (t) => {
    const { bus, checkpoints } = world(t);
    const first = followerOn(t, { confirmations: 4, checkpoints, bus });
    await first.follower.start();
    await processedThrough(first.follower, await first.chain.blockNumber());
    const payTo = randomAddress();
    const paid = await first.chain.sendNative({ fromAccount: 1, to: payTo, value: 5n });
    await processedThrough(first.follower, paid.blockNumber);
    t.deepEqual(first.spy.publications, [], 'the follower passed the block: it watches no address');

    const transfer = recovered(paid, payTo);
    await first.follower.adoptTransfers([transfer]);
    t.deepEqual(transfersIn(first.spy.publications), [transfer], 'published once adoptTransfers resolves');
    t.is(first.follower.status().pendingFinal, 1);
    t.like(
      (await checkpoints.get(network))?.window.find((block) => block.number === paid.blockNumber),
      { hash: paid.blockHash, transfers: true, finalPublished: false },
    );

    // Weir restarts before the block is final: the checkpoint still owes it its final.
    await first.follower.stop();
    t.deepEqual(finalsIn(first.spy.publications), []);
    await first.chain.mine(3);
    const second = followerOn(t, { confirmations: 4, checkpoints, bus });
    await second.follower.start();
    const final = await waitUntil('the final of the recovered block', () => finalsIn(second.spy.publications)[0]);
    t.like(final, { blockNumber: paid.blockNumber, blockHash: paid.blockHash });
    await processedThrough(second.follower, paid.blockNumber + 3);
    t.deepEqual(
      second.spy.publications.map(({ message }) => message.type),
      ['final'],
      'no transfer again, one final',
    );
    t.is(second.follower.status().pendingFinal, 0);
  },
);

test.serial(
  "a transfer adopted in a block before the follower's first block gets its final from the canonical block once that height is final, after a restart in between",
  async (t) => {
    const { bus, checkpoints } = world(t);
    if (chain === undefined) throw new Error('no chain');
    const payTo = randomAddress();
    const paid = await chain.sendNative({ fromAccount: 2, to: payTo, value: 5n });
    await chain.mine(1);
    // The follower starts at the head, after the paying block: it never reads that block.
    const first = followerOn(t, { confirmations: 3, checkpoints, bus });
    await first.follower.start();
    await processedThrough(first.follower, paid.blockNumber + 1);
    await first.follower.adoptTransfers([recovered(paid, payTo)]);
    t.deepEqual((await checkpoints.get(network))?.orphanedHeights, [paid.blockNumber]);
    await first.follower.stop();

    await chain.mine(1);
    const second = followerOn(t, { confirmations: 3, checkpoints, bus });
    await second.follower.start();
    const final = await waitUntil('the final of the recovered height', () => finalsIn(second.spy.publications)[0]);
    t.like(final, { blockNumber: paid.blockNumber, blockHash: paid.blockHash });
    await processedThrough(second.follower, paid.blockNumber + 2);
    t.is(finalsIn(second.spy.publications).length, 1);
    t.deepEqual((await checkpoints.get(network))?.orphanedHeights, []);
    t.is(second.follower.status().pendingFinal, 0);
  },
);

test.serial(
  "a transfer adopted in a block that leaves the chain is reported in the reorg, and its height's final names the new block",
  async (t) => {
    const { bus, checkpoints } = world(t);
    const { follower, spy, chain } = followerOn(t, { confirmations: 3, checkpoints, bus });
    await follower.start();
    await processedThrough(follower, await chain.blockNumber());
    const fork = await chain.snapshot();
    const payTo = randomAddress();
    const orphaned = await chain.sendNative({ fromAccount: 3, to: payTo, value: 5n });
    await processedThrough(follower, orphaned.blockNumber);
    await follower.adoptTransfers([recovered(orphaned, payTo)]);

    await chain.revert(fork);
    await chain.mine(4);
    const reorg = await waitUntil('the reorg message', () => reorgsIn(spy.publications)[0]);
    t.deepEqual(reorg.removedBlocks, [{ number: orphaned.blockNumber, hash: orphaned.blockHash }]);
    const final = await waitUntil('the final of the height', () => finalsIn(spy.publications)[0]);
    t.deepEqual(
      { number: final.blockNumber, hash: final.blockHash },
      { number: orphaned.blockNumber, hash: (await chain.block(orphaned.blockNumber)).hash },
    );
    t.not(final.blockHash, orphaned.blockHash);
    t.deepEqual(
      spy.publications.map(({ message }) => message.type),
      ['transfer', 'reorg', 'final'],
    );
  },
);

test.serial("a follower adopts only its own network's transfers, and only while it runs", async (t) => {
  const { bus, checkpoints } = world(t);
  const { follower, chain } = followerOn(t, { confirmations: 2, checkpoints, bus });
  const paid: Mined = { hash: `0x${'ab'.repeat(32)}`, blockNumber: 1, blockHash: `0x${'cd'.repeat(32)}` };
  const transfer = recovered(paid, randomAddress());
  await t.throwsAsync(follower.adoptTransfers([transfer]), {
    instanceOf: EvmFollowerStateError,
    message: /the follower is new/,
  });
  await follower.start();
  await processedThrough(follower, await chain.blockNumber());
  await t.throwsAsync(follower.adoptTransfers([{ ...transfer, network: 'elsewhere' }]), {
    instanceOf: EvmFollowerStateError,
    message: /network elsewhere/,
  });
  await follower.stop();
  await t.throwsAsync(follower.adoptTransfers([transfer]), { instanceOf: EvmFollowerStateError, message: /stopped/ });
});
