import { getAddress, type Address } from 'viem';
import { deriveDepositAddress } from '../../src/chain-ingest/evm/contracts/deposit-address.ts';
import { evmPaymentRequest } from '../../src/chain-ingest/evm/payment-request.ts';
import { evmUnpayableAddress } from '../../src/chain-ingest/evm/unpayable-address.ts';
import type { Rail, RailNetwork } from '../../src/chain-ingest/rail.ts';
import { TEST_NETWORK } from '../../src/chain-ingest/test-rail.ts';

/**
 * The test network on an EVM node (or a fake of one) with the ForwarderFactory `factory` and the
 * token `usdc`: its USDC is that token and its deposit addresses are the factory's forwarders, so
 * a session on the test network is swept on that node.
 */
export function forwarderTestRail(factory: Address, usdc: Address): { network: RailNetwork; rail: Rail } {
  const network: RailNetwork = {
    ...TEST_NETWORK,
    assets: TEST_NETWORK.assets
      .filter((a) => a.currency === 'usdc')
      .map((a) => ({ ...a, address: usdc.toLowerCase() })),
  };
  const rail: Rail = {
    name: 'forwarders',
    networks: (environment) => (environment === 'test' ? [network] : []),
    unpayableAddress: ({ network: on, address }) => evmUnpayableAddress({ network: on, address }),
    paymentRequest: evmPaymentRequest,
    depositAddress: ({ checkoutSessionId, merchantAddress }) =>
      deriveDepositAddress({
        factoryAddress: factory,
        merchantAddress: getAddress(merchantAddress),
        sessionId: checkoutSessionId,
      }),
  };
  return { network, rail };
}
