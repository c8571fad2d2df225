import type { Rail } from '../rail.ts';
import { createSolanaJsonRpc } from './follower/json-rpc.ts';
import { solanaRailFollower } from './follower/rail-follower.ts';
import { createSolanaReferences } from './follower/solana-references.ts';
import { KNOWN_SOLANA_CHAIN_IDS } from './networks.ts';
import { createPayTransactionBuilder } from './pay-transaction.ts';
import { createSolanaTransactionRecovery } from './recover-signature.ts';
import { createSolanaRail } from './solana-rail.ts';
import { loadSolanaSetup, type OfferedSolanaNetwork, type SolanaLocalInfo } from './solana-setup.ts';

export { KNOWN_SOLANA_CHAIN_IDS };

/**
 * Everything a Weir process needs for Solana, set up from its configuration: the rail (networks,
 * references, one follower per network, recovery by signature), the references the followers
 * poll, and the transfers payers' wallets sign on the hosted page.
 */
export async function createSolanaIngest(input: {
  env: Readonly<Record<string, string | undefined>>;
  rpcConfigFile?: string;
  local?: SolanaLocalInfo | null;
  /** Base polling interval; the network's slot time ×2 (local: 100 ms) unless given. */
  pollIntervalMs?: number;
}) {
  const offered: OfferedSolanaNetwork[] = await loadSolanaSetup(input);
  const references = createSolanaReferences();
  const rpcs = offered.map(({ endpoints }) => createSolanaJsonRpc({ url: endpoints.http[0]! }));
  const rail: Rail = {
    ...createSolanaRail({ networks: offered.map((o) => o.network) }),
    followers: (context) =>
      offered.flatMap(({ network, endpoints }, index) => {
        if (context.network !== undefined && network.network !== context.network) return [];
        const local = network.cluster === 'localnet';
        const wsUrl = endpoints.ws[0];
        return solanaRailFollower({
          network,
          rpc: rpcs[index]!,
          endpoint: endpoints.http[0]!,
          references,
          context,
          pollIntervalMs: input.pollIntervalMs ?? (local ? 100 : Math.max(400, network.slotTimeMs * 2)),
          ...(local ? { maxPollIntervalMs: 1000 } : {}),
          ...(wsUrl === undefined ? {} : { wsUrl }),
        });
      }),
    recovery: (context) =>
      createSolanaTransactionRecovery({
        bus: context.bus,
        reads: context.reads,
        clock: context.clock,
        networks: offered.map(({ network }, index) => ({
          network,
          rpc: rpcs[index]!,
          // Looked up at each recovery: the network's follower runs where its lease is held, and that moves.
          get follower() {
            const follower = context.followers.get(network.network);
            if (!follower?.adoptTransfers) return undefined;
            return {
              adopt: (signature: string, slot: bigint, reference: string) =>
                void follower.adoptTransfers!([
                  { transactionHash: signature, blockNumber: Number(slot), reference } as never,
                ]),
            };
          },
        })),
      }),
  };
  return {
    offered,
    rail,
    /** The references the followers poll; the app keeps them current from the log (solana-references-projection.ts). */
    references,
    /** The transfers payers' Solana wallets sign on the hosted page; undefined when no Solana network is offered. */
    payTransactions:
      offered.length === 0
        ? undefined
        : createPayTransactionBuilder(
            offered.map(({ network, endpoints }) => ({ network, rpcUrl: endpoints.http[0]! })),
          ),
  };
}
