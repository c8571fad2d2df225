import type { Bus } from '../../bus/bus.ts';
import type { Rail } from '../rail.ts';
import { createSolanaJsonRpc } from './follower/json-rpc.ts';
import { createSolanaFollower, type SolanaFollower } from './follower/solana-follower.ts';
import { createSolanaReferences, solanaReferencesProjection } from './follower/solana-references.ts';
import { KNOWN_SOLANA_CHAIN_IDS } from './networks.ts';
import { createSolanaRail } from './solana-rail.ts';
import { createPayTransactionBuilder } from './pay-transaction.ts';
import { createSolanaTransactionRecovery } from './recover-signature.ts';
import { loadSolanaSetup, type OfferedSolanaNetwork, type SolanaLocalInfo } from './solana-setup.ts';

export { KNOWN_SOLANA_CHAIN_IDS };

/**
 * Everything a Weir process needs for Solana, set up from its configuration: the rail, the
 * projection that tells the followers which references to poll, and one follower per network.
 */
export async function createSolanaIngest(input: {
  env: Readonly<Record<string, string | undefined>>;
  rpcConfigFile?: string;
  local?: SolanaLocalInfo | null;
  bus: Bus;
  /** Base polling interval; the network's slot time (local: 100 ms) unless given. */
  pollIntervalMs?: number;
  log: (line: string) => void;
}) {
  const offered: OfferedSolanaNetwork[] = await loadSolanaSetup(input);
  const references = createSolanaReferences();
  const projection = solanaReferencesProjection(
    references,
    offered.map((o) => o.network.network),
  );

  const rpcs = offered.map(({ endpoints }) => createSolanaJsonRpc({ url: endpoints.http[0]! }));
  const followers: SolanaFollower[] = offered.map(({ network }, index) => {
    const local = network.cluster === 'localnet';
    return createSolanaFollower({
      network,
      rpc: rpcs[index]!,
      bus: input.bus,
      references,
      pollIntervalMs: input.pollIntervalMs ?? (local ? 100 : Math.max(400, network.slotTimeMs * 2)),
      ...(local ? { maxPollIntervalMs: 1000 } : {}),
      log: (line) => input.log(`[ingest ${network.network}] ${line}`),
    });
  });
  // Recovery by signature through the rail interface; its followers are this module's own (started below).
  const rail: Rail = {
    ...createSolanaRail({ networks: offered.map((o) => o.network) }),
    recovery: (context) =>
      createSolanaTransactionRecovery({
        bus: context.bus,
        reads: context.reads,
        clock: context.clock,
        networks: offered.map(({ network }, index) => ({ network, rpc: rpcs[index]!, follower: followers[index]! })),
      }),
  };
  return {
    offered,
    rail,
    /** The transfers payers' Solana wallets sign on the hosted page; undefined when no Solana network is offered. */
    payTransactions:
      offered.length === 0
        ? undefined
        : createPayTransactionBuilder(
            offered.map(({ network, endpoints }) => ({ network, rpcUrl: endpoints.http[0]! })),
          ),
    projection,
    followers,
    async start() {
      for (const follower of followers) await follower.start();
    },
    async stop() {
      for (const follower of followers) await follower.stop();
    },
  };
}
