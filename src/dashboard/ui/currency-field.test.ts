import test from 'ava';
import { offeredCurrencies, payableCurrencies } from '../../actors/line-items.ts';
import { TEST_NETWORK } from '../../chain-ingest/test-rail.ts';
import type { RailNetwork } from '../../chain-ingest/rail.ts';
import { currencyOptions } from './currency-field.tsx';

const railOf = (networks: RailNetwork[]) => ({ networks: () => networks });
const WALLET = '0x5Ea1Fee5EA1fEe5EA1feE5EA1Fee5Ea1Fee5Ea1F';

test("the currencies offered are those a network's asset has and a price may be in, in the API's order", (t) => {
  // WETH is an asset's currency, not one a price can be in: the API would refuse it.
  const weth = { ...TEST_NETWORK.assets[0]!, id: 'weir-testnet:weth', currency: 'weth' };
  const rail = railOf([{ ...TEST_NETWORK, assets: [...TEST_NETWORK.assets, weth] }]);
  t.deepEqual(offeredCurrencies(rail, 'test'), ['usdc', 'dai', 'eth']);
  t.deepEqual(offeredCurrencies(railOf([]), 'live'), []);
});

test("the currencies payable are those of the networks where the organization's default wallet is one the rail accepts", (t) => {
  const tether: RailNetwork = {
    ...TEST_NETWORK,
    network: 'tether-testnet',
    chainId: 7358,
    assets: [{ ...TEST_NETWORK.assets[0]!, id: 'tether-testnet:usdt', currency: 'usdt', chainId: 7358 }],
  };
  const refused = new Set<string>();
  const rail = {
    networks: () => [TEST_NETWORK, tether],
    unpayableAddress: ({ address }: { address: string }) => (refused.has(address) ? 'is refused' : null),
  };
  const wallet = (chainId: number, isDefault = true, address = WALLET) => ({ chainId, address, isDefault });
  t.deepEqual(payableCurrencies(rail, 'test', []), []);
  t.deepEqual(payableCurrencies(rail, 'test', [wallet(7357)]), ['usdc', 'dai', 'eth']);
  t.deepEqual(payableCurrencies(rail, 'test', [wallet(7358)]), ['usdt']);
  t.deepEqual(payableCurrencies(rail, 'test', [wallet(7357), wallet(7358)]), ['usdc', 'usdt', 'dai', 'eth']);
  // Only the default wallet receives; a wallet on a chain no network here is leaves nothing.
  t.deepEqual(payableCurrencies(rail, 'test', [wallet(7358, false), wallet(1)]), []);
  refused.add('0xrefused');
  t.deepEqual(payableCurrencies(rail, 'test', [wallet(7357, true, '0xrefused'), wallet(7358)]), ['usdt']);
});

test('a currency no wallet receives any more is kept among the choices, marked, rather than dropped', (t) => {
  t.deepEqual(currencyOptions(['usdc', 'dai'], 'dai'), [
    { value: 'usdc', label: 'USDC' },
    { value: 'dai', label: 'DAI' },
  ]);
  t.deepEqual(currencyOptions(['usdc'], 'usdt'), [
    { value: 'usdc', label: 'USDC' },
    { value: 'usdt', label: 'USDT (no wallet)' },
  ]);
  t.deepEqual(currencyOptions([], 'usdc'), [{ value: 'usdc', label: 'USDC (no wallet)' }]);
});
