import test from 'ava';
import { addExact, compareExact, exactOfApi, exactToApi, owedInChainUnits, subtractExact } from './money.ts';

const wei = (units: bigint) => ({ units, decimals: 18 });
const usdcUnits = (units: bigint) => ({ units, decimals: 6 });

test('exact amounts of different decimals add at the finer scale, losing no wei', (t) => {
  t.deepEqual(addExact(wei(1n), usdcUnits(1n)), wei(1_000_000_000_001n));
  t.deepEqual(subtractExact(exactOfApi(13993n), wei(139_929_999_999_999n)), wei(1n));
  t.is(compareExact(wei(139_930_000_000_000n), exactOfApi(13993n)), 0);
  t.is(compareExact(wei(139_929_999_999_999n), exactOfApi(13993n)), -1);
});

test('on the 10^8 scale, received rounds down and owed rounds up; in chain units, owed rounds up and nothing owed is 0', (t) => {
  t.is(exactToApi(wei(139_929_999_999_999n), 'down'), 13992n);
  t.is(exactToApi(wei(1n), 'up'), 1n);
  t.is(exactToApi(wei(9_999_999_999n), 'down'), 0n);
  t.is(exactToApi(wei(-1n), 'down'), -1n);
  t.is(exactToApi(wei(-1n), 'up'), 0n);
  t.is(exactToApi(usdcUnits(15n), 'down'), 1500n);
  t.is(owedInChainUnits(wei(1n), 18), 1n);
  t.is(owedInChainUnits(wei(1n), 6), 1n);
  t.is(owedInChainUnits(exactOfApi(150_000_001n), 6), 1_500_001n);
  t.is(owedInChainUnits(exactOfApi(1n), 18), 10_000_000_000n);
  t.is(owedInChainUnits(wei(-5n), 18), 0n);
});
