import type { Tracer } from '@opentelemetry/api';
import type { AssetRef, SessionAddress } from '../../machines/checkout-session.types.ts';
import type { Bus } from '../bus/bus.ts';
import type { Environment } from '../event-store/event-store.ts';
import type { SweepExecutor } from '../sweeper/sweeper.ts';
import type { Clock } from '../shared/clock.ts';
import type { Log } from '../shared/logger.ts';
import type { Metrics } from '../shared/metrics.ts';
import { assetPaysCurrency } from '../shared/asset-currency.ts';
import { isExactInDecimals } from '../shared/money.ts';
import type { ChainTransferMessage } from './chain-messages.ts';
import type { CheckpointStore } from './evm/follower/checkpoint.ts';
import type { RecoveryReads, SessionRecord } from './payment-intents.ts';
import type { WatchedAddresses } from './watched-addresses.ts';

/** A network a rail can take payments on. */
export type RailNetwork = {
  /** Bus name, e.g. `ethereum`, `base-sepolia`: the `<network>` of `chain.<network>.*`. */
  network: string;
  chainId: number;
  name: string;
  kind: 'evm' | 'solana' | 'tron';
  environment: Environment;
  nativeCurrency: { symbol: string; decimals: number };
  explorerTxUrl: string;
  /** The explorer's name (`Etherscan`), when the network definition gives one. */
  explorerName?: string;
  assets: AssetRef[];
};

/** What a wallet shows the payer beside a request, where the scheme carries it (Solana Pay does). */
export type PaymentWords = { label?: string; message?: string };

/** A request to pay `amountDue` (the asset's chain units) at one of a session's addresses. */
export type PaymentRequestInput = { address: SessionAddress; amountDue: bigint; words: PaymentWords };

/** What the payer's wallet is handed: the URI it opens (and the QR shows) and where the money goes. */
export type PaymentRequest = { uri: string; payee: string };

/** What a rail's follower shows of itself (health, metrics, the chain-read gate, the status page). */
export type RailFollowerStatus = {
  network: string;
  /** The newest head (slot, block) heard of; null before the first. */
  head: bigint | null;
  /** The last height whose transfers are all published; null before the first. */
  processed: bigint | null;
  /** Heights with published transfers whose `final` is still owed. */
  pendingFinal: number;
  /** When (on the follower's clock) it read the newest head it has since processed through; null before. */
  caughtUpAt: number | null;
  /** The RPC endpoint requests go to first. */
  endpoint: string;
  headSource: 'websocket' | 'polling';
  lastError: string | null;
  running: boolean;
};

/**
 * One network's follower: turns chain data into `transfer | reorg | final` messages on the bus
 * (`chain.<network>.*`, see chain-messages.ts), resuming from its own checkpoint.
 */
export type RailFollower = {
  start(): Promise<void>;
  /** Resolves once the follower has a starting point that survives a crash (or on stop()). */
  ready(): Promise<void>;
  stop(): Promise<void>;
  status(): RailFollowerStatus;
  /** How many heights make a transfer final on this network (the hosted page shows progress against it). */
  readonly confirmations: number;
  /** Takes transfers a recovery found as its own (their `final` owed, their withdrawal on a reorg). */
  adoptTransfers?(transfers: readonly ChainTransferMessage[]): Promise<void>;
};

/** What the app hands a rail to build its followers. */
export type RailFollowerContext = {
  bus: Bus;
  watched: WatchedAddresses;
  /**
   * Resolves once `watched` holds every address whose session was in the log when it was called
   * (this instance's read models caught up with the log's head); rejects when they cannot in time,
   * and the follower reads the batch again. With several instances a session may be created through
   * another one a moment before its payment is mined: without this the follower would miss it.
   */
  watchedCurrent?(): Promise<void>;
  clock: Clock;
  /** Weir's data directory: the rail keeps its followers' checkpoints under it. */
  dataDir: string;
  metrics: Metrics;
  /** Called when a follower's `caughtUpAt` moves on. */
  onCaughtUp(): void;
  /** How often to poll for heads without a WebSocket, when the app overrides the rail's choice (tests). */
  pollIntervalMs?: number;
  /** Only this network's follower (the app runs each network's follower where it holds that network's lease). */
  network?: string;
  /** Where followers that keep a checkpoint keep it, given the rail's own store (the app shares it between instances). */
  checkpoints?(own: CheckpointStore): CheckpointStore;
  /** Where followers that work in batches trace each one (when tracing is on). */
  tracer?: Tracer;
  /** Structured fields where a follower has them (Weir's pino logger). */
  log: Log;
};

export type RecoveryOutcome =
  | 'complete'
  | 'partial'
  | 'in_process'
  | 'late_payment'
  | 'wrong_token_or_network'
  | 'wrong_claim';

/** What recovering a transaction found (the spec's recovery outcomes; see evm/recover-transaction.ts). */
export type Recovery =
  | {
      outcome: 'complete' | 'partial' | 'in_process' | 'late_payment' | 'wrong_token_or_network';
      message: string;
      session: SessionRecord;
    }
  | { outcome: 'wrong_claim'; message: string };

export type RecoveryRequest = {
  organizationId: string;
  environment: Environment;
  chainId: number;
  /** The transaction's id on its chain (hash, signature). */
  transactionHash: string;
  /** Only this session's deposit addresses count (and only its transfers are credited). */
  checkoutSessionId?: string;
};

export type TransactionRecovery = { recover(request: RecoveryRequest): Promise<Recovery> };

/** What the app hands a rail to build its recovery. */
export type RailRecoveryContext = {
  bus: Bus;
  reads: RecoveryReads;
  clock: Pick<Clock, 'now'>;
  /** The running followers by network (all rails'); a rail hands its own transfers to its own. */
  followers: ReadonlyMap<string, RailFollower>;
  log(line: string): void;
};

/**
 * A payment rail: one chain family behind one interface. The matcher, the hosted page, the
 * sweeper, recovery and the registry only ever talk to rails, so a new family is its own folder
 * (`src/chain-ingest/<family>/`) plus one line in start-weir's `rails`.
 *
 * - `networks`: the networks and assets it offers per environment (the registry, /chains, the hosted page).
 * - `depositAddress`: where a session's payer pays (an address or, for Solana Pay, the merchant's
 *   wallet with a reference), derived from (network, merchant wallet, session) alone.
 * - `unpayableAddress`: which merchant wallets it refuses, and why.
 * - `paymentRequest`: what the hosted page hands the payer's wallet (URI, QR) and where money goes.
 * - `followers`: one follower per network publishing `transfer | reorg | final` on the bus; the
 *   matcher consumes those and knows nothing of the family.
 * - `sweepExecutors`: where there is anything to sweep (none when funds go straight to the merchant).
 * - `recovery`: recovery by transaction id on its networks.
 * The last three are optional: a rail without them (the test rail) offers networks whose messages
 * come from elsewhere.
 */
export type Rail = {
  name: string;
  networks(environment: Environment): RailNetwork[];
  /**
   * Why the rail cannot pay a merchant at `address` on `network` (funds sent there would be lost,
   * or it is Weir's own machinery on that network), or null when it can. `address` is already in
   * the format of the network's kind; each rail family says its own rule.
   */
  unpayableAddress(input: { network: RailNetwork; address: string }): string | null;
  depositAddress(input: {
    network: RailNetwork;
    organizationId: string;
    checkoutSessionId: string;
    merchantAddress: string;
  }): string;
  paymentRequest(input: PaymentRequestInput): PaymentRequest;
  followers?(context: RailFollowerContext): RailFollower[];
  /** Sweep executors by network name. */
  sweepExecutors?(): ReadonlyMap<string, SweepExecutor>;
  recovery?(context: RailRecoveryContext): TransactionRecovery;
};

/** The networks a rail offers in either environment, test first. */
export const everyNetwork = (rail: Pick<Rail, 'networks'>): RailNetwork[] => [
  ...rail.networks('test'),
  ...rail.networks('live'),
];

/**
 * The assets (as `SYMBOL on Network`) that could take `amount` (API scale) of `currency` exactly, on
 * the networks of `environment` (only `chainIds` when given, only `assetIds` when given): an amount
 * finer than an asset's decimals (1e-8 USDC, which has 6) cannot be paid in it.
 */
export function assetsPayingExactly(
  rail: Pick<Rail, 'networks'>,
  environment: Environment,
  currency: string,
  amount: bigint,
  restriction: { chainIds?: readonly number[]; assetIds?: readonly string[] } = {},
): { payable: string[]; unpayable: string[] } {
  const { chainIds = [], assetIds = [] } = restriction;
  const payable: string[] = [];
  const unpayable: string[] = [];
  for (const network of rail.networks(environment)) {
    if (chainIds.length > 0 && !chainIds.includes(network.chainId)) continue;
    for (const asset of network.assets) {
      if (!assetPaysCurrency(asset, currency)) continue;
      if (assetIds.length > 0 && !assetIds.includes(asset.id)) continue;
      (isExactInDecimals(amount, asset.decimals) ? payable : unpayable).push(`${asset.symbol} on ${network.name}`);
    }
  }
  return { payable, unpayable };
}

/**
 * Recovery over every rail that offers it: a request goes to the rail offering its chain id in the
 * request's environment; undefined when no rail offers a network to recover on.
 */
export function combinedRecovery(
  rails: readonly Rail[],
  context: RailRecoveryContext,
): TransactionRecovery | undefined {
  const recoveries = rails.flatMap((rail) =>
    rail.recovery && everyNetwork(rail).length > 0 ? [{ rail, recovery: rail.recovery(context) }] : [],
  );
  if (recoveries.length === 0) return undefined;
  return {
    recover(request) {
      const found = recoveries.find(({ rail }) =>
        rail.networks(request.environment).some((network) => network.chainId === request.chainId),
      );
      // A chain id no rail offers: the first rail's recovery answers it (a 400 naming the chain id).
      return (found ?? recoveries[0]!).recovery.recover(request);
    },
  };
}

/** Several rails seen as one. */
export function combineRails(rails: Rail[]): Rail & { railFor(network: string): Rail | undefined } {
  const railFor = (network: string) => rails.find((r) => everyNetwork(r).some((n) => n.network === network));
  return {
    name: rails.map((r) => r.name).join('+'),
    networks: (environment) => rails.flatMap((r) => r.networks(environment)),
    unpayableAddress(input) {
      const rail = railFor(input.network.network);
      return rail ? rail.unpayableAddress(input) : `no rail offers network ${input.network.network}`;
    },
    depositAddress(input) {
      const rail = railFor(input.network.network);
      if (!rail) throw new Error(`no rail offers network ${input.network.network}`);
      return rail.depositAddress(input);
    },
    paymentRequest(input) {
      const rail = railFor(input.address.network);
      if (!rail) throw new Error(`no rail offers network ${input.address.network}`);
      return rail.paymentRequest(input);
    },
    railFor,
  };
}
