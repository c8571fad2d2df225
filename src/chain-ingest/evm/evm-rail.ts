import type { Address } from 'viem';
import type { Rail } from '../rail.ts';
import { deriveDepositAddress } from './contracts/deposit-address.ts';
import type { NetworkRegistry } from './networks/registry.ts';

/**
 * The EVM rail: a session's deposit address on a network is the CREATE2 forwarder derived from
 * (the network's ForwarderFactory, the merchant wallet, the session id). A network is offered only
 * when it has an RPC endpoint and a factory.
 */
export function createEvmRail(deps: { registry: NetworkRegistry; factories: ReadonlyMap<number, Address> }): Rail {
  const { registry, factories } = deps;
  return {
    name: 'evm',
    networks: (environment) => registry.railNetworks(environment).filter((n) => factories.has(n.chainId)),
    depositAddress({ network, checkoutSessionId, merchantAddress }) {
      const factoryAddress = factories.get(network.chainId);
      if (!factoryAddress) throw new Error(`no ForwarderFactory is configured for chain ${network.chainId}`);
      return deriveDepositAddress({ factoryAddress, merchantAddress, sessionId: checkoutSessionId });
    },
  };
}
