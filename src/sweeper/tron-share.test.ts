import test from 'ava';
import { tronShareOf } from './sweeper.ts';

test("a batched Tron sweep's energy, bandwidth, TRX burnt and rental cost are split over its sessions and add up", (t) => {
  const tron = {
    energyUsed: 200_001n,
    bandwidthUsed: 701n,
    trxBurnt: 42_000_210n,
    energySource: 'rented' as const,
    rentalCost: 3_000_001n,
  };
  const shares = [0, 1, 2].map((index) => tronShareOf(tron, 3, index));
  t.deepEqual(shares[0], {
    energyUsed: '66667',
    bandwidthUsed: '235',
    trxBurnt: '14000070',
    energySource: 'rented',
    rentalCost: '1000001',
  });
  const sum = (field: 'energyUsed' | 'bandwidthUsed' | 'trxBurnt' | 'rentalCost') =>
    shares.reduce((total, share) => total + BigInt(share[field] ?? '0'), 0n);
  t.is(sum('energyUsed'), tron.energyUsed);
  t.is(sum('bandwidthUsed'), tron.bandwidthUsed);
  t.is(sum('trxBurnt'), tron.trxBurnt);
  t.is(sum('rentalCost'), tron.rentalCost);
  const { rentalCost: _paid, ...burnt } = tron;
  t.false('rentalCost' in tronShareOf({ ...burnt, energySource: 'burn' }, 1, 0));
});
