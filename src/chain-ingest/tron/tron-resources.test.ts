import test from 'ava';
import {
  energyStep,
  estimateSweepEnergy,
  FORWARDER_CALL_ENERGY,
  FORWARDER_DEPLOY_ENERGY,
  TRC20_TRANSFER_ENERGY,
  tronBandwidthOf,
  tronSweepFee,
} from './tron-resources.ts';

const prices = { energySun: 210n, bandwidthSun: 1000n };
const none = { energy: 0n, stakedBandwidth: 0n, freeBandwidth: 0n };

test('a TRC-20 transfer into a holder costs about 64k energy, into a non-holder about 130k', (t) => {
  const intoHolder = estimateSweepEnergy([{ deployed: true, native: false, tokens: [{ merchantHolds: true }] }]);
  const intoNonHolder = estimateSweepEnergy([{ deployed: true, native: false, tokens: [{ merchantHolds: false }] }]);
  t.is(intoHolder - FORWARDER_CALL_ENERGY, TRC20_TRANSFER_ENERGY.intoHolder);
  t.is(intoNonHolder - FORWARDER_CALL_ENERGY, TRC20_TRANSFER_ENERGY.intoNonHolder);
  t.true(TRC20_TRANSFER_ENERGY.intoHolder >= 64_000n && TRC20_TRANSFER_ENERGY.intoHolder < 70_000n);
  t.true(TRC20_TRANSFER_ENERGY.intoNonHolder >= 130_000n && TRC20_TRANSFER_ENERGY.intoNonHolder < 140_000n);
});

test('the estimate adds the forwarder: its deployment once, its call per deposit, each token and TRX', (t) => {
  t.is(estimateSweepEnergy([]), 0n);
  const fresh = estimateSweepEnergy([
    { deployed: false, native: true, tokens: [{ merchantHolds: true }, { merchantHolds: false }] },
  ]);
  t.is(
    fresh,
    FORWARDER_CALL_ENERGY +
      FORWARDER_DEPLOY_ENERGY +
      10_000n +
      TRC20_TRANSFER_ENERGY.intoHolder +
      TRC20_TRANSFER_ENERGY.intoNonHolder,
  );
  const two = estimateSweepEnergy([
    { deployed: true, native: false, tokens: [{ merchantHolds: true }] },
    { deployed: true, native: false, tokens: [{ merchantHolds: true }] },
  ]);
  t.is(two, 2n * (FORWARDER_CALL_ENERGY + TRC20_TRANSFER_ENERGY.intoHolder));
});

test("bandwidth is the transaction's bytes: a USDT transfer's 68 bytes of call data come to about 345", (t) => {
  const usdtTransfer = tronBandwidthOf(68);
  t.true(usdtTransfer >= 340n && usdtTransfer <= 350n, String(usdtTransfer));
  t.is(tronBandwidthOf(0), 280n);
  t.throws(() => tronBandwidthOf(-1), { instanceOf: RangeError });
  t.throws(() => tronBandwidthOf(1.5), { instanceOf: RangeError });
});

test('with no energy nor bandwidth of its own, the account burns all of both', (t) => {
  const fee = tronSweepFee({ energyUsed: 130_000n, bandwidthUsed: 700n, available: none, prices });
  t.deepEqual(fee, {
    energyUsed: 130_000n,
    bandwidthUsed: 700n,
    energyBurnt: 130_000n,
    bandwidthBurnt: 700n,
    trxBurnt: 130_000n * 210n + 700n * 1000n, // 27.3 TRX + 0.7 TRX
  });
  t.is(fee.trxBurnt, 28_000_000n);
});

test('own energy covers what it can and the rest is burnt; bandwidth is covered whole or burnt whole', (t) => {
  const partly = tronSweepFee({
    energyUsed: 100_000n,
    bandwidthUsed: 400n,
    available: { energy: 60_000n, stakedBandwidth: 0n, freeBandwidth: 600n },
    prices,
  });
  t.is(partly.energyBurnt, 40_000n);
  t.is(partly.bandwidthBurnt, 0n, 'the free 600 cover 400 bytes');
  t.is(partly.trxBurnt, 40_000n * 210n);
  const covered = tronSweepFee({
    energyUsed: 100_000n,
    bandwidthUsed: 400n,
    available: { energy: 500_000n, stakedBandwidth: 1000n, freeBandwidth: 0n },
    prices,
  });
  t.is(covered.trxBurnt, 0n);
  // 300 free and 300 staked do not add up: neither covers 400 bytes, all 400 are burnt.
  const split = tronSweepFee({
    energyUsed: 0n,
    bandwidthUsed: 400n,
    available: { energy: 0n, stakedBandwidth: 300n, freeBandwidth: 300n },
    prices,
  });
  t.is(split.trxBurnt, 400_000n);
  t.throws(() => tronSweepFee({ energyUsed: -1n, bandwidthUsed: 0n, available: none, prices }));
});

test('the policy: burn sends; staked sends when enough, else waits or sends per the setting; rented rents the shortfall', (t) => {
  t.deepEqual(energyStep({ source: 'burn' }, 130_000n, 0n), { action: 'send' });
  t.deepEqual(energyStep({ source: 'staked', whenShort: 'wait' }, 130_000n, 200_000n), { action: 'send' });
  t.deepEqual(energyStep({ source: 'staked', whenShort: 'wait' }, 130_000n, 100_000n), {
    action: 'wait',
    short: 30_000n,
  });
  t.deepEqual(energyStep({ source: 'staked', whenShort: 'burn' }, 130_000n, 100_000n), { action: 'send' });
  t.deepEqual(energyStep({ source: 'rented' }, 130_000n, 100_000n), { action: 'rent', energy: 30_000n });
  t.deepEqual(energyStep({ source: 'rented' }, 130_000n, 130_000n), { action: 'send' });
});
