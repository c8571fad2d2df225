import test from 'ava';
import { invoiceFixture } from '../../machines/invoice.fixture.ts';
import type { Rail, RailNetwork } from '../chain-ingest/rail.ts';
import { TEST_NETWORK } from '../chain-ingest/test-rail.ts';
import { ValidationError } from '../shared/errors.ts';
import { assertPayableAtFinalize, type PayabilityDeps } from './invoice-payability.ts';

/** A second network whose USDC has 18 decimals (as on BNB Chain), beside the test network's 6-decimal one. */
const FINE: RailNetwork = {
  ...TEST_NETWORK,
  network: 'fine-testnet',
  name: 'Fine Testnet',
  chainId: 7358,
  assets: [{ ...TEST_NETWORK.assets[0]!, id: 'fine-testnet:usdc', chainId: 7358, decimals: 18 }],
};
const rail: Pick<Rail, 'networks' | 'unpayableAddress'> = {
  networks: (environment) => (environment === 'test' ? [TEST_NETWORK, FINE] : []),
  unpayableAddress: () => null,
};
const walletOn = (chainId: number) => ({
  id: `wallet-${chainId}`,
  address: '0x1111111111111111111111111111111111111111',
  chainId,
  isDefault: true,
});
const depsWith = (...chainIds: number[]): PayabilityDeps => ({
  rail,
  organization: { withdrawalAddresses: chainIds.map(walletOn) },
});

test('a total only an asset without a wallet can take exactly is refused: the pay page would offer only assets that cannot take it', (t) => {
  // 1.0000001 USDC: 18 decimals hold it, 6 do not. Unrestricted: every network's USDC would do.
  const unrestricted = { paymentMethods: { chainIds: [], assetIds: [] } };
  const invoice = invoiceFixture({ ...unrestricted, amountDue: '100000010' });
  assertPayableAtFinalize(depsWith(TEST_NETWORK.chainId, FINE.chainId), invoice);
  const error = t.throws(() => assertPayableAtFinalize(depsWith(TEST_NETWORK.chainId), invoice), {
    instanceOf: ValidationError,
  });
  t.like(error, { field: 'lineItems', code: 'amount_not_payable' });
  t.regex(
    error.message,
    /cannot be paid exactly in USDC on Weir Testnet, the assets of this organization's payment methods/,
  );
  // A total 6 decimals hold is finalized with the one wallet.
  assertPayableAtFinalize(depsWith(TEST_NETWORK.chainId), invoiceFixture({ ...unrestricted, amountDue: '100000000' }));
});

test('a total refused for its decimals is said as an amount in the currency (1.0000001 USDC), not as the 10^8 integer', (t) => {
  const invoice = invoiceFixture({ amountDue: '100000010', paymentMethods: { chainIds: [], assetIds: [] } });
  // No wallet on the 18-decimal network: refused for the assets of the organization's payment methods.
  const withoutFine = t.throws(() => assertPayableAtFinalize(depsWith(TEST_NETWORK.chainId), invoice));
  t.regex(withoutFine.message, /the total 1\.0000001 USDC cannot be paid exactly in USDC on Weir Testnet/);
  t.notRegex(withoutFine.message, /100000010|10\^-8/);
  // Limited to the 6-decimal asset: refused for the assets it names.
  const limited = invoiceFixture({
    amountDue: '100000010',
    paymentMethods: { chainIds: [], assetIds: ['weir-testnet:usdc'] },
  });
  const restricted = t.throws(() => assertPayableAtFinalize(depsWith(TEST_NETWORK.chainId, FINE.chainId), limited));
  t.like(restricted, { field: 'lineItems', code: 'amount_not_payable' });
  t.regex(restricted.message, /the total 1\.0000001 USDC cannot be paid exactly in USDC on Weir Testnet;/);
  t.notRegex(restricted.message, /100000010|10\^-8/);
});
