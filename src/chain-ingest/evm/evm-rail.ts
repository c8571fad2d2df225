import type { Address } from 'viem';
import type { Rail } from '../rail.ts';
import { deriveDepositAddress, forwarderImplementationAddress } from './contracts/deposit-address.ts';
import type { NetworkRegistry } from './networks/registry.ts';
import { evmUnpayableAddress, type EvmMachinery } from './unpayable-address.ts';

/**
 * The EVM rail: a session's deposit address on a network is the CREATE2 forwarder derived from
 * (the network's ForwarderFactory, the merchant wallet, the session id). A network is offered only
 * when it has an RPC endpoint and a factory. A merchant wallet is refused when funds sent there
 * are lost or when it is Weir's own machinery: the factory, its Forwarder, the sweeper account.
 */
export function createEvmRail(deps: {
  registry: NetworkRegistry;
  factories: ReadonlyMap<number, Address>;
  /** The account that sends sweeps (it pays their gas), when this server sweeps. */
  sweeper?: Address | null;
}): Rail {
  const { registry, factories } = deps;
  const machineryOn = (chainId: number): EvmMachinery[] => {
    const factory = factories.get(chainId);
    return [
      ...(factory
        ? [
            { address: factory, what: "Weir's ForwarderFactory" },
            { address: forwarderImplementationAddress(factory), what: "the Forwarder contract of Weir's factory" },
          ]
        : []),
      ...(deps.sweeper ? [{ address: deps.sweeper, what: "Weir's sweeper account" }] : []),
    ];
  };
  return {
    name: 'evm',
    networks: (environment) => registry.railNetworks(environment).filter((n) => factories.has(n.chainId)),
    unpayableAddress: ({ network, address }) =>
      evmUnpayableAddress({ network, address, machinery: machineryOn(network.chainId) }),
    depositAddress({ network, checkoutSessionId, merchantAddress }) {
      const factoryAddress = factories.get(network.chainId);
      if (!factoryAddress) throw new Error(`no ForwarderFactory is configured for chain ${network.chainId}`);
      return deriveDepositAddress({ factoryAddress, merchantAddress, sessionId: checkoutSessionId });
    },
  };
}
