import { join } from 'node:path';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createPollingProcessor } from '../../processing/processor.ts';
import { createSystemClock } from '../../shared/clock.ts';
import type { SweepExecutor, SweepRequest } from '../../sweeper/sweeper.ts';
import { createEvmWriteClients } from '../evm/contracts/clients.ts';
import { deriveDepositAddress, forwarderImplementationAddress } from '../evm/contracts/deposit-address.ts';
import { createEvmSweepExecutor } from '../evm/evm-sweep-executor.ts';
import { createEvmFollower, type EvmFollowerNetwork } from '../evm/follower/evm-follower.ts';
import { createTransactionRecovery } from '../evm/recover-transaction.ts';
import { createFileCheckpointStore } from '../evm/follower/file-checkpoint-store.ts';
import { registerFollowerMetrics } from '../evm/follower/follower-metrics.ts';
import { NATIVE_ASSET_ADDRESS } from '../network-definition.ts';
import type { Rail, RailFollower, RailFollowerContext } from '../rail.ts';
import { evmToTron, tronToEvm, tronWalletAddressProblem, type TronAddress } from './address.ts';
import { toTronRailNetwork } from './define-network.ts';
import { tronDepositAddress } from './deposit-address.ts';
import type { EnergyRental } from './energy-rental.ts';
import { tronPaymentRequest } from './payment-request.ts';
import { createTronReconciler, type OpenDeposit } from './reconciler.ts';
import { tronRecoveryRail } from './recover-transaction.ts';
import { createSolidifiedLogs } from './solidified-logs.ts';
import { tronBus, tronWatched } from './tron-address-layer.ts';
import { createTronNativeSweepExecutor } from './tron-native-sweep-executor.ts';
import { createTronResourceNode } from './tron-resource-node.ts';
import { createTronValueKinds } from './trx-transfers.ts';
import { withTronResources } from './tron-resource-sweeps.ts';
import type { TronEnergyPolicy } from './tron-resources.ts';
import type { OfferedTronNetwork } from './tron-setup.ts';

/** The follower's view of a Tron network: its TRC-20 contracts in the 20-byte form the eth_ JSON-RPC uses. */
export function tronFollowedNetwork(offered: OfferedTronNetwork): EvmFollowerNetwork {
  const { network } = offered;
  return {
    network: network.network,
    chainId: network.chainId,
    confirmations: network.confirmations,
    tokens: network.assets
      .filter((a) => a.address !== NATIVE_ASSET_ADDRESS)
      .map((a) => ({ address: tronToEvm(a.address).toLowerCase(), symbol: a.symbol, decimals: a.decimals })),
    nativeSymbol: network.nativeCurrency.symbol,
    nativeDecimals: network.nativeCurrency.decimals,
  };
}

/** The Forwarder a network's factory deployed, T… form. */
function implementationOf(offered: OfferedTronNetwork): string {
  const { deployment } = offered;
  return deployment.create2 === 'tvm'
    ? deployment.implementation
    : evmToTron(forwarderImplementationAddress(tronToEvm(deployment.factory)));
}

/**
 * The Tron rail: the EVM scheme on the TVM. A session's deposit address is the CREATE2 forwarder
 * bound to the merchant's wallet (prefix 0x41 on Tron; the local chain's node derives with 0xff).
 * Addresses are T… everywhere past this rail; the follower (the EVM one, over the full node's
 * eth_ JSON-RPC) sees them in the 20-byte form through the address layer (tron-address-layer.ts).
 * Blocks once solidified are read again for logs the node's eth_getLogs left out (solidified-logs.ts).
 */
export function createTronRail(deps: {
  offered: readonly OfferedTronNetwork[];
  /**
   * Where the local chain's sweeps are sent (its EVM node) and with which key; `native`: through
   * the proxy's `/wallet/…` calls as on a real node instead.
   */
  localSweeper?: { sendUrl: string; key: Hex; native?: boolean } | null;
  /** The key that sweeps the real Tron networks (through the node's HTTP API); without it they are not swept. */
  sweeperKey?: Hex | null;
  /** The operator's cap on a sweep's fee limit (sun); the executor's default unless given. */
  maxFeeLimitSun?: bigint | null;
  /** How long a sweep waits for its receipt once sent; each executor's default (90 s native, 180 s EVM form) unless given. */
  receiptTimeoutMs?: number;
  /** Where sweeps take their energy (burn unless given) and, with `rented`, the provider. */
  energy?: { policy: TronEnergyPolicy; rental: EnergyRental | null };
  /** Logs the energy decisions; console.warn unless given. */
  log?: (line: string) => void;
  /** The open deposits of a network, for the reconciler; without it no reconciler runs. */
  openDeposits?: (network: string) => Promise<OpenDeposit[]>;
  /** How often the reconciler compares balances with credits; 60 s unless given. */
  reconcileIntervalMs?: number;
}): Rail {
  const { offered } = deps;
  const byNetwork = new Map(offered.map((o) => [o.network.network, o]));
  const of = (network: string): OfferedTronNetwork => {
    const found = byNetwork.get(network);
    if (!found) throw new Error(`the Tron rail does not offer network ${network}`);
    return found;
  };
  const sweeperOf = (key: Hex | null | undefined) => (key ? evmToTron(privateKeyToAccount(key).address) : null);
  const localSweeperAddress = sweeperOf(deps.localSweeper?.key);
  const realSweeperAddress = sweeperOf(deps.sweeperKey);

  return {
    name: 'tron',
    networks: (environment) =>
      offered.filter((o) => o.network.environment === environment).map((o) => toTronRailNetwork(o.network)),
    unpayableAddress({ network, address }) {
      const problem = tronWalletAddressProblem(address);
      if (problem !== null) return problem;
      const found = byNetwork.get(network.network);
      if (!found) return null;
      if (address === found.deployment.factory) return "is Weir's ForwarderFactory";
      if (address === implementationOf(found)) return "is the Forwarder contract of Weir's factory";
      const sweeper = found.deployment.create2 === 'evm' ? localSweeperAddress : realSweeperAddress;
      if (sweeper !== null && address === sweeper) return "is Weir's sweeper account";
      return null;
    },
    depositAddress({ network, checkoutSessionId, merchantAddress }) {
      const found = of(network.network);
      const { deployment } = found;
      if (deployment.create2 === 'tvm')
        return tronDepositAddress({
          factoryAddress: deployment.factory,
          implementationAddress: deployment.implementation,
          merchantAddress,
          sessionId: checkoutSessionId,
        });
      // The local chain runs on an EVM node, which derives CREATE2 with 0xff: the address its factory deploys to.
      return evmToTron(
        deriveDepositAddress({
          factoryAddress: tronToEvm(deployment.factory),
          merchantAddress: tronToEvm(merchantAddress),
          sessionId: checkoutSessionId,
        }),
      );
    },
    paymentRequest: tronPaymentRequest,
    followers(context) {
      const own = createFileCheckpointStore(join(context.dataDir, 'ingest'));
      const checkpoints = context.checkpoints?.(own) ?? own;
      const only = offered.filter((o) => context.network === undefined || o.network.network === context.network);
      const followers = only.map((o) => tronFollower(o, context, checkpoints, deps));
      registerFollowerMetrics(
        context.metrics,
        followers.map((f) => f.evm),
        context.clock,
      );
      return followers.map((f) => f.rail);
    },
    sweepExecutors() {
      const executors = new Map<string, SweepExecutor>();
      const local = deps.localSweeper;
      const clock = createSystemClock();
      for (const o of offered) {
        const isLocal = o.deployment.create2 === 'evm';
        const key = isLocal ? local?.key : deps.sweeperKey;
        if (!key) continue;
        const node = createTronResourceNode(o.endpoints.http[0]!);
        const withResources = (executor: SweepExecutor, sweeper: TronAddress) =>
          withTronResources(executor, {
            network: o.network.network,
            sweeper,
            factory: o.deployment.factory,
            node,
            policy: deps.energy?.policy ?? { source: 'burn' },
            rental: deps.energy?.rental ?? null,
            log: deps.log ?? ((line) => console.warn(`[sweeper] ${line}`)),
          });
        if (!isLocal || local?.native === true) {
          // Built, signed and broadcast through the node's HTTP API (the proxy's, on the local chain).
          const native = createTronNativeSweepExecutor({
            jsonRpcUrl: o.endpoints.http[0]!,
            key,
            factory: o.deployment.factory,
            node,
            clock,
            ...(deps.maxFeeLimitSun ? { maxFeeLimitSun: deps.maxFeeLimitSun } : {}),
            ...(deps.receiptTimeoutMs === undefined ? {} : { receiptTimeoutMs: deps.receiptTimeoutMs }),
            ...(isLocal ? { receiptPollMs: 100 } : {}),
          });
          executors.set(o.network.network, withResources(native, sweeperOf(key)!));
          continue;
        }
        if (!local) continue;
        const clients = createEvmWriteClients({
          rpcUrl: local.sendUrl,
          chainId: o.network.chainId,
          privateKey: local.key,
          pollingIntervalMs: 50,
        });
        // Sent on the EVM node; energy, bandwidth and prices read from the Tron node (the proxy) as from a real one.
        executors.set(
          o.network.network,
          withResources(
            evmFormSweeps(
              createEvmSweepExecutor({
                clients,
                factoryAddress: tronToEvm(o.deployment.factory),
                receiptTimeoutMs: deps.receiptTimeoutMs,
              }),
            ),
            evmToTron(clients.walletClient.account.address),
          ),
        );
      }
      return executors;
    },
    // The EVM recovery behind the address layer: TRC-20 Transfer logs of the receipt, TRX from the transaction.
    recovery: (context) =>
      createTransactionRecovery({
        rail: tronRecoveryRail(offered, tronFollowedNetwork),
        bus: context.bus,
        reads: context.reads,
        clock: context.clock,
        followers: context.followers,
        log: context.log,
      }),
  };
}

/** A sweep executor on the local chain's EVM node, handed T… addresses. */
function evmFormSweeps(executor: SweepExecutor): SweepExecutor {
  const evmForm = (requests: SweepRequest[]): SweepRequest[] =>
    requests.map((r) => ({
      ...r,
      depositAddress: tronToEvm(r.depositAddress),
      merchantAddress: tronToEvm(r.merchantAddress),
      assets: r.assets.map((a) => (a === NATIVE_ASSET_ADDRESS ? a : tronToEvm(a))),
    }));
  return {
    funded: (requests) => executor.funded(evmForm(requests)),
    flush: (requests, beforeSend) => executor.flush(evmForm(requests), beforeSend),
    minedSweep: (hash, signed) => executor.minedSweep(hash, signed),
    rebroadcast: (hash, signed) => executor.rebroadcast(hash, signed),
  };
}

/** A processor running `step` every `intervalMs` after the previous one ended, on real time (as the node's blocks come). */
const repeating = (name: string, step: () => Promise<void>, intervalMs: number, context: RailFollowerContext) =>
  createPollingProcessor({
    name,
    step,
    intervalMs: () => intervalMs,
    backoff: { firstMs: intervalMs, maxMs: Math.max(intervalMs, 30_000) },
    metrics: context.metrics,
    log: context.log,
  });

function tronFollower(
  offered: OfferedTronNetwork,
  context: RailFollowerContext,
  checkpoints: ReturnType<typeof createFileCheckpointStore>,
  options: { openDeposits?: (network: string) => Promise<OpenDeposit[]>; reconcileIntervalMs?: number },
) {
  const followed = tronFollowedNetwork(offered);
  const name = followed.network;
  const published = new Map<string, number>();
  const log = (line: string) => context.log(`[ingest ${name}] ${line}`);
  const local = offered.deployment.create2 === 'evm';
  const pollIntervalMs = context.pollIntervalMs ?? (local ? 100 : Math.max(250, offered.network.blockTimeMs));
  const evm = createEvmFollower({
    network: followed,
    rpc: offered.endpoints,
    bus: tronBus(context.bus, name, published),
    watched: tronWatched(context.watched),
    // A TRC-10 transfer shows its amount as `value`: only a TRX transfer or a contract call's call value is TRX.
    nativeTransfers: createTronValueKinds(offered.endpoints.http).trxTransfers,
    ...(context.watchedCurrent ? { watchedCurrent: context.watchedCurrent } : {}),
    checkpoints,
    clock: context.clock,
    onCaughtUp: () => context.onCaughtUp(),
    pollIntervalMs,
    log,
    ...(context.tracer ? { tracer: context.tracer } : {}),
    metrics: context.metrics,
  });
  const solid = createSolidifiedLogs({
    network: name,
    chainId: followed.chainId,
    rpcUrl: offered.solidityRpc ?? offered.endpoints.http[0]!,
    tokens: followed.tokens,
    watched: context.watched,
    published,
    processed: () => evm.status().processed,
    adopt: (transfers) => evm.adoptTransfers(transfers),
    cursorFile: join(context.dataDir, 'ingest', `${name}.solidified.json`),
    now: () => new Date(context.clock.now()),
    log,
  });
  const loops = [repeating(`tron-solidified-logs.${name}`, () => solid.step(), pollIntervalMs, context)];
  if (options.openDeposits) {
    const reconciler = createTronReconciler({
      network: name,
      chainId: followed.chainId,
      rpcUrl: offered.solidityRpc ?? offered.endpoints.http[0]!,
      openDeposits: options.openDeposits,
      adopt: (transfers) => evm.adoptTransfers(transfers),
      now: () => new Date(context.clock.now()),
      log,
    });
    loops.push(
      repeating(`tron-reconciler.${name}`, () => reconciler.step(), options.reconcileIntervalMs ?? 60_000, context),
    );
  }
  const rail: RailFollower = {
    confirmations: followed.confirmations,
    async start() {
      await evm.start();
      for (const loop of loops) void loop.start();
    },
    ready: () => evm.ready(),
    async stop() {
      for (const loop of loops) await loop.stop();
      await evm.stop();
    },
    status: () => evm.status(),
    // Recovery hands T… transfers; the address layer leaves them as they are.
    adoptTransfers: (transfers) => evm.adoptTransfers(transfers),
  };
  return { evm, rail };
}
