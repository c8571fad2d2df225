import test from 'ava';
import { SweepNodeError, SweepResourcesShortError, SweepRevertedError } from '../../sweeper/sweep-errors.ts';
import type { SweepExecutor, SweepRequest } from '../../sweeper/sweeper.ts';
import { evmToTron } from './address.ts';
import type { EnergyRental } from './energy-rental.ts';
import type { TronResourceNode } from './tron-resource-node.ts';
import { withTronResources } from './tron-resource-sweeps.ts';
import type { TronAccountResources, TronEnergyPolicy } from './tron-resources.ts';
import { fixtureFactory, fixtureSweepRequest } from './tron-sweep.fixture.ts';

const sweeper = evmToTron('0x90F79bf6EB2c4f870365E785982E1f101E93b906');
const factory = fixtureFactory;
const request = fixtureSweepRequest;

/** A node whose account holds `held`, estimating `estimate` (null: no estimate), prices 210/1000. */
function fakeNode(held: TronAccountResources[], estimate: bigint | null) {
  const reads: string[] = [];
  const node: TronResourceNode = {
    async accountResources(address) {
      reads.push(address);
      return held[Math.min(reads.length - 1, held.length - 1)]!;
    },
    prices: async () => ({ energySun: 210n, bandwidthSun: 1000n }),
    estimateEnergy: async () => estimate,
    shapes: async (deposits) =>
      deposits.map(() => ({ deployed: false, native: false, tokens: [{ merchantHolds: false }] })),
    callDataBytes: async () => 260,
  };
  return { node, reads };
}

/** An executor whose flush mines with `gasUsed`, or reverts. */
function fakeExecutor(gasUsed: bigint, outcome: 'mined' | 'reverted' = 'mined') {
  const flushed: SweepRequest[][] = [];
  const executor: SweepExecutor = {
    funded: async (requests) => requests.map(() => true),
    async flush(requests, beforeSend) {
      await beforeSend({ transactionHash: '0xabc', signedTransaction: '0xdef' });
      flushed.push(requests);
      const transaction = { transactionHash: '0xabc', gasUsed, gasCost: 1n };
      if (outcome === 'reverted') throw new SweepRevertedError('reverted', transaction);
      return transaction;
    },
    minedSweep: async (hash) => ({ transaction: { transactionHash: hash, gasUsed, gasCost: 1n }, reverted: false }),
    rebroadcast: async () => 'pending',
  };
  return { executor, flushed };
}

const free = (energy: bigint): TronAccountResources => ({ energy, stakedBandwidth: 0n, freeBandwidth: 600n });

function wrap(
  executor: SweepExecutor,
  node: TronResourceNode,
  policy: TronEnergyPolicy,
  rental: EnergyRental | null = null,
) {
  const lines: string[] = [];
  const wrapped = withTronResources(executor, {
    network: 'tron-local',
    sweeper,
    factory,
    node,
    policy,
    rental,
    log: (line) => lines.push(line),
  });
  return { wrapped, lines };
}

const noHook = async () => {};

test('burn: the sweep records its energy and bandwidth and the TRX burnt as its gasCost, in sun', async (t) => {
  const { node } = fakeNode([free(0n)], 120_000n);
  const { executor } = fakeExecutor(118_000n);
  const { wrapped } = wrap(executor, node, { source: 'burn' });
  const result = await wrapped.flush([request], noHook);
  const bandwidth = result.tron!.bandwidthUsed;
  t.true(bandwidth > 280n && bandwidth < 600n, String(bandwidth));
  t.deepEqual(result.tron, {
    energyUsed: 118_000n,
    bandwidthUsed: bandwidth,
    trxBurnt: 118_000n * 210n,
    energySource: 'burn',
  });
  t.is(result.gasCost, 118_000n * 210n, 'the free bandwidth covers the bytes: only energy is burnt');
  t.is(result.gasUsed, 118_000n);
});

test('staked with enough energy: nothing is burnt', async (t) => {
  const { node } = fakeNode([free(500_000n)], 120_000n);
  const { executor } = fakeExecutor(118_000n);
  const result = await wrap(executor, node, { source: 'staked', whenShort: 'wait' }).wrapped.flush([request], noHook);
  t.is(result.tron?.trxBurnt, 0n);
  t.is(result.tron?.energySource, 'staked');
});

test('staked and short, waiting: nothing is signed, and the failure blames no deposit', async (t) => {
  const { node } = fakeNode([free(50_000n)], 120_000n);
  const { executor, flushed } = fakeExecutor(118_000n);
  const error = await t.throwsAsync(
    wrap(executor, node, { source: 'staked', whenShort: 'wait' }).wrapped.flush([request], noHook),
    { instanceOf: SweepResourcesShortError },
  );
  t.true(error instanceof SweepNodeError, 'the sweeper backs the network off as for a node failure');
  t.regex(error.message, /50000 staked energy.*needs about 120000 \(70000 short\)/);
  t.is(flushed.length, 0);
});

test('staked and short, burning: sent, the shortfall burnt', async (t) => {
  const { node } = fakeNode([free(50_000n)], 120_000n);
  const { executor, flushed } = fakeExecutor(118_000n);
  const result = await wrap(executor, node, { source: 'staked', whenShort: 'burn' }).wrapped.flush([request], noHook);
  t.is(flushed.length, 1);
  t.is(result.tron?.trxBurnt, 68_000n * 210n);
});

test('rented: the shortfall is rented for the sweeper first, and what was delegated is read back', async (t) => {
  const { node, reads } = fakeNode([free(20_000n), free(120_000n)], 120_000n);
  const { executor } = fakeExecutor(118_000n);
  const orders: { receiver: string; energy: bigint; network: string }[] = [];
  const rental: EnergyRental = {
    async rent(order) {
      orders.push(order);
      return { orderId: 'order-1', costSun: 9_000_000n };
    },
  };
  const { wrapped, lines } = wrap(executor, node, { source: 'rented' }, rental);
  const result = await wrapped.flush([request], noHook);
  t.deepEqual(orders, [{ network: 'tron-local', receiver: sweeper, energy: 100_000n }]);
  t.deepEqual(reads, [sweeper, sweeper]);
  t.is(result.tron?.trxBurnt, 0n);
  t.is(result.tron?.rentalCost, 9_000_000n);
  t.is(result.tron?.energySource, 'rented');
  t.regex(lines.join('\n'), /rented 100000 energy .*order-1/);
  t.throws(() => wrap(executor, node, { source: 'rented' }, null), { message: /no rental provider/ });
});

test('without the node estimate, the shape gives it: an undeployed forwarder into a non-holder', async (t) => {
  const { node } = fakeNode([free(150_000n)], null);
  const { executor, flushed } = fakeExecutor(118_000n);
  // 15k + 70k + 131k = 216k needed, 150k staked: waits.
  await t.throwsAsync(wrap(executor, node, { source: 'staked', whenShort: 'wait' }).wrapped.flush([request], noHook), {
    message: /needs about 216000/,
  });
  t.is(flushed.length, 0);
});

test('a revert burns energy too; a sweep found mined after a restart counts all of it as burnt (upper bound)', async (t) => {
  const { node } = fakeNode([free(100_000n)], 120_000n);
  const reverted = fakeExecutor(40_000n, 'reverted');
  const error = await t.throwsAsync(
    wrap(reverted.executor, node, { source: 'staked', whenShort: 'burn' }).wrapped.flush([request], noHook),
    { instanceOf: SweepRevertedError },
  );
  t.is(error.transaction.tron?.trxBurnt, 0n, '40k of the 100k staked: nothing burnt');
  const { executor } = fakeExecutor(118_000n);
  const mined = await wrap(executor, node, { source: 'staked', whenShort: 'burn' }).wrapped.minedSweep('0x123', null);
  t.is(mined?.transaction.tron?.bandwidthUsed, 540n);
  t.is(mined?.transaction.tron?.trxBurnt, 118_000n * 210n + 540n * 1000n);
});

test('a node that fails while preparing is a node failure, before anything is signed', async (t) => {
  const { node } = fakeNode([free(0n)], 1n);
  const { executor, flushed } = fakeExecutor(1n);
  const failing: TronResourceNode = {
    ...node,
    prices: async () => {
      throw new Error('connect ECONNREFUSED');
    },
  };
  await t.throwsAsync(wrap(executor, failing, { source: 'burn' }).wrapped.flush([request], noHook), {
    instanceOf: SweepNodeError,
    message: /ECONNREFUSED/,
  });
  t.is(flushed.length, 0);
});

test('a flush mined as a sped-up copy (another hash) lets go of what it kept under the hash it signed', async (t) => {
  const { node } = fakeNode([free(100_000n)], 120_000n);
  const executor: SweepExecutor = {
    ...fakeExecutor(40_000n).executor,
    async flush(_requests, beforeSend) {
      await beforeSend({ transactionHash: '0xsigned', signedTransaction: '0xdef' });
      return { transactionHash: '0xcopy', gasUsed: 40_000n, gasCost: 1n };
    },
  };
  const { wrapped } = wrap(executor, node, { source: 'staked', whenShort: 'burn' });
  const swept = await wrapped.flush([request], noHook);
  t.is(swept.tron?.trxBurnt, 0n, 'priced with what the flush prepared: 40k of the 100k staked');
  // Looked up later by the signed hash, nothing kept from the flush is left: priced from the node, all burnt.
  const later = await wrapped.minedSweep('0xsigned', null);
  t.is(later?.transaction.tron?.trxBurnt, 40_000n * 210n + 540n * 1000n);
});
