import type { Rail } from '../rail.ts';
import { walletAddressProblem } from './address.ts';
import { toSolanaRailNetwork, type SolanaNetwork } from './define-network.ts';
import { sessionReference } from './pay-url.ts';
import { solanaPaymentRequest } from './payment-request.ts';

/**
 * The Solana rail: payments are Solana Pay transfer requests straight to the merchant's wallet
 * (its associated token account for a token), so there is nothing to sweep. A session's
 * "payment address" on a Solana network is its reference key (`solanaReference`): the matcher and
 * the registry find the session by it, and the hosted page builds the `solana:` URL from it and
 * the merchant's wallet. It is derived (`sessionReference`), so nothing is stored and no key exists. A network is offered only when it has an RPC endpoint.
 */
export function createSolanaRail(deps: { networks: readonly SolanaNetwork[] }): Rail {
  const offered = deps.networks.map((network) => ({ network, rail: toSolanaRailNetwork(network) }));
  return {
    name: 'solana',
    networks: (environment) => offered.filter((n) => n.network.environment === environment).map((n) => n.rail),
    // A token account (usually an off-curve associated token account) lies off the curve: named as such.
    unpayableAddress: ({ address }) => walletAddressProblem(address),
    depositAddress: ({ network, organizationId, checkoutSessionId, merchantAddress }) =>
      sessionReference({ network: network.network, organizationId, checkoutSessionId, merchantAddress }),
    paymentRequest: solanaPaymentRequest,
  };
}
