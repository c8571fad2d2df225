import test from 'ava';
import { offeredCurrencies } from '../../actors/line-items.ts';
import { TEST_NETWORK } from '../../chain-ingest/test-rail.ts';
import type { RailNetwork } from '../../chain-ingest/rail.ts';
import { currencyOptions } from './currency-field.tsx';

const railOf = (networks: RailNetwork[]) => ({ networks: () => networks });

test("the currencies offered are those a network's asset has and a price may be in, in the API's order", (t) => {
  // WETH is an asset's currency, not one a price can be in: the API would refuse it.
  const weth = { ...TEST_NETWORK.assets[0]!, id: 'weir-testnet:weth', currency: 'weth' };
  const rail = railOf([{ ...TEST_NETWORK, assets: [...TEST_NETWORK.assets, weth] }]);
  t.deepEqual(offeredCurrencies(rail, 'test'), ['usdc', 'dai', 'eth']);
  t.deepEqual(offeredCurrencies(railOf([]), 'live'), []);
});

test('a currency no network takes any more is kept among the choices, marked, rather than dropped', (t) => {
  t.deepEqual(currencyOptions(['usdc', 'dai'], 'dai'), [
    { value: 'usdc', label: 'USDC' },
    { value: 'dai', label: 'DAI' },
  ]);
  t.deepEqual(currencyOptions(['usdc'], 'usdt'), [
    { value: 'usdc', label: 'USDC' },
    { value: 'usdt', label: 'USDT (no network takes it)' },
  ]);
  t.deepEqual(currencyOptions([], 'usdc'), [{ value: 'usdc', label: 'USDC (no network takes it)' }]);
});
