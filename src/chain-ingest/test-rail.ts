import { createHash } from 'node:crypto';
import { evmPaymentRequest } from './evm/payment-request.ts';
import { evmUnpayableAddress } from './evm/unpayable-address.ts';
import { LOCAL_EXPLORER_TX_URL } from './network-definition.ts';
import type { Rail, RailNetwork } from './rail.ts';

/**
 * A rail for tests without a chain: one test network, `weir-testnet` (chain id 7357), with a
 * 6-decimal USDC, an 18-decimal DAI and a native coin. Deposit addresses are derived by hashing;
 * transfers to them are published on the bus by a test exactly as a follower would. No setting
 * offers it (nobody could pay its pages): tests inject it through `startWeir`'s `extraRails`.
 */
export const TEST_NETWORK: RailNetwork = {
  network: 'weir-testnet',
  chainId: 7357,
  name: 'Weir Testnet',
  kind: 'evm',
  environment: 'test',
  nativeCurrency: { symbol: 'TEST', decimals: 18 },
  explorerTxUrl: LOCAL_EXPLORER_TX_URL,
  assets: [
    {
      id: 'weir-testnet:usdc',
      name: 'USD Coin',
      symbol: 'USDC',
      currency: 'usdc',
      chainId: 7357,
      address: '0x00000000000000000000000000000000000a11ce',
      decimals: 6,
    },
    {
      id: 'weir-testnet:dai',
      name: 'Dai Stablecoin',
      symbol: 'DAI',
      currency: 'dai',
      chainId: 7357,
      address: '0x0000000000000000000000000000000000000da1',
      decimals: 18,
    },
    {
      id: 'weir-testnet:eth',
      name: 'Test Ether',
      symbol: 'ETH',
      currency: 'eth',
      chainId: 7357,
      address: 'native',
      decimals: 18,
    },
  ],
};

export function createTestRail(): Rail {
  return {
    name: 'test',
    networks: (environment) => (environment === 'test' ? [TEST_NETWORK] : []),
    // The test network takes EVM addresses: the EVM rule, with no contracts of Weir's own on it.
    unpayableAddress: ({ network, address }) => evmUnpayableAddress({ network, address }),
    paymentRequest: evmPaymentRequest,
    depositAddress({ network, checkoutSessionId, merchantAddress }) {
      const digest = createHash('sha256')
        .update(`${network.network}:${merchantAddress.toLowerCase()}:${checkoutSessionId}`)
        .digest('hex');
      return `0x${digest.slice(0, 40)}`;
    },
  };
}
