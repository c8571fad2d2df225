import { getAddress, type Address } from 'viem';
import type { SweepExecutor } from '../../sweeper/sweeper.ts';
import type { EvmWriteClients } from './contracts/clients.ts';
import { flushForwarders } from './contracts/flush-forwarders.ts';

/**
 * Sweeps through the network's ForwarderFactory with the operator's gas key (never a merchant
 * key): deploys each forwarder if needed and flushes its tokens and native coin to its merchant.
 */
export function createEvmSweepExecutor(deps: { clients: EvmWriteClients; factoryAddress: Address }): SweepExecutor {
  return {
    async flush(requests) {
      const result = await flushForwarders(deps.clients, {
        factoryAddress: deps.factoryAddress,
        requests: requests.map((r) => ({
          merchantAddress: getAddress(r.merchantAddress),
          sessionId: r.checkoutSessionId,
          tokens: r.assets.filter((a) => a !== 'native').map((a) => getAddress(a)),
          native: r.assets.includes('native'),
        })),
      });
      return { transactionHash: result.transactionHash, gasUsed: result.gasUsed, gasCost: result.gasCost };
    },
  };
}
