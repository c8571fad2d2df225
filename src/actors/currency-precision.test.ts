import test from 'ava';
import type { Rail, RailNetwork } from '../chain-ingest/rail.ts';
import { TEST_NETWORK } from '../chain-ingest/test-rail.ts';
import { ValidationError } from '../shared/errors.ts';
import { assertAmountFitsCurrency, assertPriceFitsCurrency, currencyDecimals } from './currency-precision.ts';

/** The test network's 6-decimal USDC, and in live a second network whose USDC has 18 (as on BNB Chain). */
const FINE: RailNetwork = {
  ...TEST_NETWORK,
  environment: 'live',
  chainId: 7358,
  assets: [{ ...TEST_NETWORK.assets[0]!, id: 'fine:usdc', chainId: 7358, decimals: 18 }],
};
const rail: Pick<Rail, 'networks'> = {
  networks: (environment) => (environment === 'test' ? [TEST_NETWORK] : [TEST_NETWORK, FINE]),
};

test("a currency's decimals are its finest asset's, at most the API's 8; none for a currency no asset pays", (t) => {
  t.is(currencyDecimals(rail, 'test', 'usdc'), 6);
  t.is(currencyDecimals(rail, 'live', 'usdc'), 8);
  t.is(currencyDecimals(rail, 'test', 'dai'), 8);
  t.is(currencyDecimals(rail, 'test', 'trx'), null);
});

test('a price finer than every asset of its currency is refused naming the field, as an amount of the currency', (t) => {
  const error = t.throws(() => assertAmountFitsCurrency(rail, 'test', 'unitAmount', 'usdc', 112345670n), {
    instanceOf: ValidationError,
  });
  t.is(error.field, 'unitAmount');
  t.is(error.code, 'parameter_invalid');
  t.is(
    error.message,
    'unitAmount: 112345670 is 1.1234567 USDC, more decimals than any USDC asset carries (at most 6), so it could never be paid exactly; send a multiple of 100 (0.000001 USDC, scaled by 10^8)',
  );
  // Six decimals fit; so do seven where an 18-decimal USDC is offered, and any amount of a currency no asset pays.
  t.notThrows(() => assertAmountFitsCurrency(rail, 'test', 'unitAmount', 'usdc', 112345600n));
  t.notThrows(() => assertAmountFitsCurrency(rail, 'live', 'unitAmount', 'usdc', 112345670n));
  t.notThrows(() => assertAmountFitsCurrency(rail, 'test', 'unitAmount', 'trx', 1n));
});

test('a stored price finer than every asset of its currency is refused where it is used, naming the field and the price', (t) => {
  const legacy = { id: 'price-1', currency: 'usdc', unitAmount: '112345670' };
  const error = t.throws(() => assertPriceFitsCurrency(rail, 'test', 'lineItems.data[0].priceId', legacy), {
    instanceOf: ValidationError,
  });
  t.is(error.field, 'lineItems.data[0].priceId');
  t.is(error.code, 'parameter_invalid');
  t.is(
    error.message,
    'lineItems.data[0].priceId: price price-1 cannot be sold: its unitAmount 112345670 is 1.1234567 USDC, more decimals than any USDC asset carries (at most 6), so it could never be paid exactly; it was stored before Weir refused such prices, so create a price whose unitAmount is a multiple of 100 (0.000001 USDC, scaled by 10^8) and use it instead',
  );
  t.notThrows(() => assertPriceFitsCurrency(rail, 'test', 'priceId', { ...legacy, unitAmount: '112345600' }));
  t.notThrows(() => assertPriceFitsCurrency(rail, 'live', 'priceId', legacy));
});
