import { join } from 'node:path';
import type { Address, Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createPollingProcessor } from '../../processing/processor.ts';
import type { SweepExecutor } from '../../sweeper/sweeper.ts';
import type { OpenDeposit } from '../balance-reconciler.ts';
import type { Rail, RailFollower } from '../rail.ts';
import { createEvmWriteClients } from './contracts/clients.ts';
import { createEvmSweepExecutor } from './evm-sweep-executor.ts';
import { createEvmFollower, followedNetwork } from './follower/evm-follower.ts';
import { createFileCheckpointStore } from './follower/file-checkpoint-store.ts';
import { registerFollowerMetrics } from './follower/follower-metrics.ts';
import { evmPaymentRequest } from './payment-request.ts';
import { createEvmReconciler } from './reconciler.ts';
import { createTransactionRecovery, evmRecoveryRail } from './recover-transaction.ts';
import { deriveDepositAddress, forwarderImplementationAddress } from './contracts/deposit-address.ts';
import { DEVNET_CHAIN_ID } from './networks/devnet.ts';
import type { NetworkRegistry } from './networks/registry.ts';
import { evmUnpayableAddress, type EvmMachinery } from './unpayable-address.ts';

/**
 * The EVM rail: a session's deposit address on a network is the CREATE2 forwarder derived from
 * (the network's ForwarderFactory, the merchant wallet, the session id). A network is offered only
 * when it has an RPC endpoint and a factory. A merchant wallet is refused when funds sent there
 * are lost or when it is Weir's own machinery: the factory, its Forwarder, the sweeper account.
 * Live networks sweep only with the operator's key: the devnet's well-known one sweeps the devnet alone.
 * Beside each follower a balance reconciler (reconciler.ts) credits native coin sent by contracts.
 */
export function createEvmRail(deps: {
  registry: NetworkRegistry;
  factories: ReadonlyMap<number, Address>;
  /** The operator's sweeper key (its account pays sweep gas): with it the rail offers sweep executors. */
  sweeperKey?: Hex | null;
  /** The devnet's own sweeper key, public: used on the devnet alone, when the operator gave no key. */
  devnetSweeperKey?: Hex | null;
  /** How long a sweep waits for its receipt once sent; the executor's default (180 s) unless given. */
  receiptTimeoutMs?: number;
  /** The open deposits of a network, for the balance reconciler; without it no reconciler runs. */
  openDeposits?: (network: string) => Promise<OpenDeposit[]>;
  /** How often the reconciler compares native balances with credits; 60 s unless given. */
  reconcileIntervalMs?: number;
}): Rail {
  const { registry, factories } = deps;
  const sweeperAddresses = new Map<Hex, Address>(
    [deps.sweeperKey, deps.devnetSweeperKey].flatMap((key) => (key ? [[key, privateKeyToAccount(key).address]] : [])),
  );
  /** The key that sweeps on a chain, and its account: the operator's anywhere, the devnet's on the devnet alone. */
  const sweeperOn = (chainId: number): { key: Hex; address: Address } | null => {
    const key = deps.sweeperKey ?? (chainId === DEVNET_CHAIN_ID ? deps.devnetSweeperKey : null);
    return key ? { key, address: sweeperAddresses.get(key)! } : null;
  };
  /** Offered networks that have a ForwarderFactory: the ones sessions can get deposit addresses on. */
  const followed = () =>
    [...registry.offered('test'), ...registry.offered('live')].filter((network) => factories.has(network.chainId));
  const machineryOn = (chainId: number): EvmMachinery[] => {
    const factory = factories.get(chainId);
    const sweeper = sweeperOn(chainId)?.address;
    return [
      ...(factory
        ? [
            { address: factory, what: "Weir's ForwarderFactory" },
            { address: forwarderImplementationAddress(factory), what: "the Forwarder contract of Weir's factory" },
          ]
        : []),
      ...(sweeper ? [{ address: sweeper, what: "Weir's sweeper account" }] : []),
    ];
  };
  return {
    name: 'evm',
    networks: (environment) => registry.railNetworks(environment).filter((n) => factories.has(n.chainId)),
    unpayableAddress: ({ network, address }) =>
      evmUnpayableAddress({ network, address, machinery: machineryOn(network.chainId) }),
    paymentRequest: evmPaymentRequest,
    depositAddress({ network, checkoutSessionId, merchantAddress }) {
      const factoryAddress = factories.get(network.chainId);
      if (!factoryAddress) throw new Error(`no ForwarderFactory is configured for chain ${network.chainId}`);
      return deriveDepositAddress({ factoryAddress, merchantAddress, sessionId: checkoutSessionId });
    },
    // One follower per network; each is independent, so one failing RPC never stops another.
    followers(context) {
      const own = createFileCheckpointStore(join(context.dataDir, 'ingest'));
      const checkpoints = context.checkpoints?.(own) ?? own;
      const only = followed().filter((network) => context.network === undefined || network.network === context.network);
      const followers = only.map((network) => {
        const follower = createEvmFollower({
          network: followedNetwork(network),
          rpc: registry.endpoints(network.chainId),
          bus: context.bus,
          watched: context.watched,
          ...(context.watchedCurrent ? { watchedCurrent: context.watchedCurrent } : {}),
          checkpoints,
          clock: context.clock,
          onCaughtUp: () => context.onCaughtUp(),
          pollIntervalMs:
            context.pollIntervalMs ??
            (network.network === 'devnet' ? 100 : Math.max(250, Math.min(network.blockTimeMs, 4000))),
          log: (line) => context.log(`[ingest ${network.network}] ${line}`),
          ...(context.tracer ? { tracer: context.tracer } : {}),
          metrics: context.metrics,
        });
        const { openDeposits } = deps;
        if (!openDeposits) return { follower, confirmations: network.confirmations, reconciling: null };
        const intervalMs = deps.reconcileIntervalMs ?? 60_000;
        const reconciler = createEvmReconciler({
          network: network.network,
          chainId: network.chainId,
          rpcUrl: registry.endpoints(network.chainId).http[0]!,
          processed: () => follower.status().processed,
          openDeposits,
          adopt: (transfers) => follower.adoptTransfers(transfers),
          now: () => new Date(context.clock.now()),
          log: (line) => context.log(`[ingest ${network.network}] ${line}`),
        });
        // On real time, as the follower's polling: the blocks it waits for come on the node's clock.
        const reconciling = createPollingProcessor({
          name: `evm-reconciler.${network.network}`,
          step: () => reconciler.step(),
          intervalMs: () => intervalMs,
          backoff: { firstMs: intervalMs, maxMs: Math.max(intervalMs, 30_000) },
          metrics: context.metrics,
          log: context.log,
        });
        return { follower, confirmations: network.confirmations, reconciling };
      });
      registerFollowerMetrics(
        context.metrics,
        followers.map(({ follower }) => follower),
        context.clock,
      );
      return followers.map(
        ({ follower, confirmations, reconciling }): RailFollower => ({
          ...follower,
          confirmations,
          async start() {
            await follower.start();
            void reconciling?.start();
          },
          async stop() {
            await reconciling?.stop();
            await follower.stop();
          },
        }),
      );
    },
    sweepExecutors() {
      const executors = new Map<string, SweepExecutor>();
      for (const network of followed()) {
        const privateKey = sweeperOn(network.chainId)?.key;
        if (!privateKey) continue;
        const clients = createEvmWriteClients({
          rpcUrl: registry.endpoints(network.chainId).http[0]!,
          chainId: network.chainId,
          privateKey,
          pollingIntervalMs: network.network === 'devnet' ? 50 : 2000,
          node: network.network === 'devnet' ? 'local' : 'remote',
        });
        executors.set(
          network.network,
          createEvmSweepExecutor({
            clients,
            factoryAddress: factories.get(network.chainId)!,
            receiptTimeoutMs: deps.receiptTimeoutMs,
          }),
        );
      }
      return executors;
    },
    recovery: (context) =>
      createTransactionRecovery({
        rail: evmRecoveryRail(registry),
        bus: context.bus,
        reads: context.reads,
        clock: context.clock,
        followers: context.followers,
        log: context.log,
      }),
  };
}
