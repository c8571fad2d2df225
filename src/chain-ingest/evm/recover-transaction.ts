import { setTimeout as wait } from 'node:timers/promises';
import type { CheckoutSession } from '../../../machines/checkout-session.types.ts';
import type { Bus } from '../../bus/bus.ts';
import type { Environment } from '../../event-store/event-store.ts';
import type { PaymentTarget, RecoveryReads, SessionRecord } from '../payment-intents.ts';
import type { RailFollower, RecoveryRequest, TransactionRecovery } from '../rail.ts';
import type { Clock } from '../../shared/clock.ts';
import { ConflictError, UnprocessableError, UpstreamError, ValidationError, WeirError } from '../../shared/errors.ts';
import { deterministicId } from '../../shared/ids.ts';
import { encodeChainMessage, transferId, type ChainMessage, type ChainTransferMessage } from '../chain-messages.ts';
import { acceptedAddress } from '../matcher.ts';
import { createWatchedAddresses } from '../watched-addresses.ts';
import { followedNetwork, type EvmFollowerNetwork } from './follower/evm-follower.ts';
import { MalformedRpcResponseError, RpcEndpointsError } from './follower/errors.ts';
import { extractTransfers } from './follower/extract-transfers.ts';
import { getBlocksWithTransactions } from './follower/get-blocks.ts';
import { getBlockNumber } from './follower/get-chain-head.ts';
import { getTransactionReceipt } from './follower/get-receipt-statuses.ts';
import { createRpcEndpoints, type RpcEndpoints } from './follower/rpc-endpoints.ts';
import { rpcValueReader } from './follower/rpc-values.ts';
import {
  keepRecordedIndexes,
  readInternalValueCalls,
  TraceUnavailableError,
  type InternalValueCall,
} from './internal-transfers.ts';
import { NATIVE_ASSET_ADDRESS as NATIVE } from './networks/define-network.ts';
import type { NetworkRegistry, RpcEndpoints as RpcUrls } from './networks/registry.ts';

/**
 * What recovering a transaction found, with the outcome names of the spec's recovery tool:
 * `complete` (the session is complete), `partial` (it is still incomplete), `in_process` (the
 * transfer is recorded but its block is not final yet), `wrong_token_or_network` (the transaction
 * pays a deposit address of the organization in an asset or on a network its session does not
 * take) and `wrong_claim` (it pays no deposit address of the organization). `late_payment` is
 * Weir's own addition: the transfer is confirmed on a session that had already expired or been
 * canceled, so the money is recorded (and swept) as a late payment but the session stays closed.
 *
 * The spec's "Missing Payment Intent" never arises: a Weir session fixes its amount, currency and
 * deposit addresses when it is created, so no address exists before its payment intent does.
 */
export type { Recovery, RecoveryOutcome, RecoveryRequest, TransactionRecovery } from '../rail.ts';

/** A network recovery reads: as its follower sees it (tokens in the node's form) and where its node is. */
export type RecoveryNetwork = { followed: EvmFollowerNetwork; endpoints: RpcUrls };

/**
 * What a rail whose node speaks the eth_ JSON-RPC gives the recovery: its networks and its address
 * layer. The node answers addresses in 0x… hex; Weir keys sessions, deposit addresses and chain
 * messages in the rail's own form (lowercase hex on EVM, T… on Tron), so every address read from
 * the node passes through `address` before a lookup and every transfer through `transfer` before
 * it is credited or published.
 */
export type RecoveryRail = {
  /** The offered network of `environment` with chain id `chainId`; undefined when there is none. */
  network(environment: Environment, chainId: number): RecoveryNetwork | undefined;
  /** The bus names of the rail's other networks of `environment`, offered or not (a deposit address can recur there). */
  others(environment: Environment, chainId: number): string[];
  /** The transaction id as given, in the form the node takes and the follower publishes; a ValidationError when malformed. */
  transactionHash(given: string, network: RecoveryNetwork): string;
  /** An address as the node answers it, in the rail's own form. */
  address(nodeAddress: string): string;
  /** A transfer extracted from the node's answers, as the rail's follower publishes it. */
  transfer(message: ChainTransferMessage): ChainTransferMessage;
  /**
   * True when the node's call trace (`debug_traceTransaction`) can show native coin moved by
   * internal calls: asked for whenever the transaction calls a contract (one the network lists as a token aside).
   */
  internalTransfers?: boolean;
  /**
   * What the transaction's value is when it is not the native coin (a Tron TRC-10 transfer shows its
   * token amount as `value`), or null when it is; asked of a transaction with a value. Every value
   * is the native coin unless given (EVM).
   */
  notNativeValue?(network: RecoveryNetwork, transactionHash: string): Promise<string | null>;
};

const EVM_TRANSACTION_HASH = /^0x[0-9a-fA-F]{64}$/;

/** The EVM rail's side of a recovery: the registry's offered networks; addresses are lowercase hex. */
export function evmRecoveryRail(registry: Pick<NetworkRegistry, 'offered' | 'all' | 'endpoints'>): RecoveryRail {
  return {
    network(environment, chainId) {
      const definition = registry.offered(environment).find((n) => n.chainId === chainId);
      return definition && { followed: followedNetwork(definition), endpoints: registry.endpoints(chainId) };
    },
    others: (environment, chainId) =>
      registry
        .all()
        .filter((n) => n.environment === environment && n.chainId !== chainId)
        .map((n) => n.network),
    transactionHash(given, { followed }) {
      if (!EVM_TRANSACTION_HASH.test(given))
        throw new ValidationError(
          'transactionHash',
          `must be a transaction hash on ${followed.network}: 0x and 64 hex digits`,
        );
      return given.toLowerCase();
    },
    address: (nodeAddress) => nodeAddress.toLowerCase(),
    transfer: (message) => message,
    internalTransfers: true,
  };
}

/**
 * `recover` looks the transaction up on its network and credits its transfers to the tenant's
 * sessions through the matcher, as the follower would have. Throws a 400 for a chain id the
 * tenant's environment does not offer or an id not in the network's form, a 404 for a transaction the network does not have, a 422
 * for a transaction that failed, a 409 while the chain reorganizes under it, a 502 when the
 * network's RPC endpoints do not answer and a 503 when the network's follower does not take a
 * transfer of a block not final yet (refused, or not taken within `adoptTimeoutMs`).
 */
export type TransactionRecoveryDeps = {
  /** The rail's networks and address layer (`evmRecoveryRail(registry)` on EVM). */
  rail: RecoveryRail;
  bus: Bus;
  /** Sessions by deposit address and id, transfers' status, and the read models' progress (the app wiring's port). */
  reads: RecoveryReads;
  clock: Pick<Clock, 'now'>;
  /**
   * The running followers by network name. A transfer in a block not final yet is handed to its
   * network's follower, which confirms it once final (or withdraws it after a reorg) without another
   * recovery; without one it stays pending until it is recovered again once final.
   */
  followers?: ReadonlyMap<string, Pick<RailFollower, 'adoptTransfers'>>;
  /**
   * How long to wait for a follower to take the transfers (publish them and record their block's
   * `final` as owed) before answering 503 `follower_unavailable`; 30 s unless given. A follower
   * whose RPC node hangs would otherwise hold the request open for as long.
   */
  adoptTimeoutMs?: number;
  /** Resolves after `ms`, or rejects once `signal` aborts; node's timers unless given (tests pass their own). */
  delay?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** How long to wait for the matcher and the read models to show what was published; 15 s unless given. */
  settleTimeoutMs?: number;
  rpcTimeoutMs?: number;
  log?: (line: string) => void;
};

/** A transfer of the transaction to a deposit address of the tenant that cannot be credited, and why. */
type Refused = { session: SessionRecord; reason: string };

export function createTransactionRecovery(deps: TransactionRecoveryDeps): TransactionRecovery {
  const { rail, bus, reads, clock } = deps;
  const log = deps.log ?? ((line: string) => console.warn(`[recovery] ${line}`));
  const settleTimeoutMs = deps.settleTimeoutMs ?? 15_000;
  const adoptTimeoutMs = deps.adoptTimeoutMs ?? 30_000;
  const delay = deps.delay ?? ((ms: number, signal: AbortSignal) => wait(ms, undefined, { signal }));
  const pools = new Map<number, RpcEndpoints>();

  const rpcOf = ({ followed: network, endpoints }: RecoveryNetwork): RpcEndpoints => {
    let pool = pools.get(network.chainId);
    if (!pool) {
      pool = createRpcEndpoints({
        network: network.network,
        urls: endpoints.http,
        timeoutMs: deps.rpcTimeoutMs ?? 10_000,
        batchSize: 10,
        preferredRetryMs: 60_000,
        log: (line) => log(`${network.network}: ${line}`),
        now: () => Date.now(),
        signal: new AbortController().signal,
      });
      pools.set(network.chainId, pool);
    }
    return pool;
  };

  /** The tenant's deposit address at `to` on `network` (and the requested session's, when one is named). */
  const tenantAddress = async (
    request: RecoveryRequest,
    network: string,
    to: string,
  ): Promise<PaymentTarget | null> => {
    const doc = await reads.targetAt(network, to);
    const mine =
      doc !== null &&
      doc.organizationId === request.organizationId &&
      doc.environment === request.environment &&
      (request.checkoutSessionId === undefined || doc.checkoutSessionId === request.checkoutSessionId);
    return mine ? doc : null;
  };

  /** Reads what the chain says about the transaction: its block, the transaction and its receipt, and the head. */
  async function readTransaction(offered: RecoveryNetwork, transactionHash: string) {
    const rpc = rpcOf(offered);
    const network = offered.followed;
    const where = `transaction ${transactionHash} on ${network.network} (chain ${network.chainId})`;
    try {
      const receipt = await getTransactionReceipt(rpc, { network: network.network, transactionHash });
      if (receipt === null)
        throw new WeirError(
          404,
          'Not Found',
          'transaction_not_found',
          `${where} not found: it does not exist or is not mined yet`,
        );
      if (!receipt.succeeded)
        throw new UnprocessableError(`${where} failed (reverted) and moved nothing`, 'transaction_failed');
      const [block] = await getBlocksWithTransactions(rpc, {
        network: network.network,
        from: receipt.blockNumber,
        to: receipt.blockNumber,
      });
      const transaction = block?.transactions.find((t) => t.hash === receipt.transactionHash);
      if (
        !block ||
        block.hash !== receipt.blockHash ||
        !transaction ||
        receipt.transferLogs.some((l) => l.blockHash !== block.hash)
      ) {
        throw new ConflictError(
          `the chain is reorganizing around block ${receipt.blockNumber}, which holds ${where}; try again in a moment`,
          'chain_reorganizing',
        );
      }
      const head = await getBlockNumber(rpc, { network: network.network });
      return {
        receipt,
        block: { ...block, transactions: [transaction] },
        final: head - block.number + 1 >= network.confirmations,
      };
    } catch (error) {
      throw upstream(error, network, transactionHash);
    }
  }

  /**
   * The native coin the transaction's internal calls moved, from the node's call trace, or why it
   * could not be read (`unread`) when the transaction pays the tenant `directly` (its value or token
   * transfers): that part is credited all the same, with the reason in the outcome's message. Without
   * such a part, a node without a trace API is a 409 naming what the operator can do (the payment
   * may be there, unseen) and a failing one a 502, as any other read.
   *
   * A transaction to an address without code (an EOA, or a deposit address not deployed yet) calls
   * nothing, nor does one to a token the network lists (it moves only its token), so neither needs
   * a trace. The code is read at the head, not at the transaction's block (that state may be
   * pruned): a contract deployed there since only costs a trace that finds nothing.
   */
  async function readInternalCalls(
    offered: RecoveryNetwork,
    transaction: { hash: string; to: string | null },
    directly: boolean,
  ): Promise<{ calls: InternalValueCall[]; unread?: string }> {
    const { network, chainId, tokens } = offered.followed;
    const transactionHash = transaction.hash;
    const to = transaction.to?.toLowerCase();
    if (to !== undefined && tokens.some((token) => token.address.toLowerCase() === to)) return { calls: [] };
    const internal = 'internal transfers (native coin sent on by a contract such as a smart wallet or multisig)';
    const addEndpoint = `(geth or reth with the debug API, erigon; an archive node for older transactions) to WEIR_RPC_${chainId}, then recover again`;
    try {
      if (to !== undefined) {
        const code = await rpcOf(offered).request('eth_getCode', [to, 'latest']);
        if (rpcValueReader(network, 'eth_getCode').hexData(code, `code at ${to}`) === '0x') return { calls: [] };
      }
      return {
        calls: await readInternalValueCalls({
          network,
          urls: offered.endpoints.http,
          transactionHash,
          timeoutMs: deps.rpcTimeoutMs ?? 10_000,
        }),
      };
    } catch (error) {
      if (error instanceof TraceUnavailableError) {
        log(`${network}: ${error.message}`);
        const cannot = `no RPC endpoint of ${network} serves debug_traceTransaction with the callTracer for it (the node answered: ${error.answers})`;
        if (directly)
          return {
            calls: [],
            unread: `Its ${internal} could not be read: ${cannot}. If it also paid a deposit address that way, the operator can add an endpoint that does ${addEndpoint}`,
          };
        throw new ConflictError(
          `transaction ${transactionHash} on ${network} pays no deposit address in its value or token transfers, and the node cannot show ${internal}: ${cannot}. The operator can add one that does ${addEndpoint}`,
          'internal_transfers_unavailable',
        );
      }
      if (directly && (error instanceof RpcEndpointsError || error instanceof MalformedRpcResponseError)) {
        log(`${network}: the internal transfers of ${transactionHash} were not read: ${error.message}`);
        return {
          calls: [],
          unread: `Its ${internal} could not be read now (the RPC endpoints of ${network} gave no usable call trace); recover it again in a moment to credit any`,
        };
      }
      throw upstream(error, offered.followed, transactionHash);
    }
  }

  /** The internal transfers of the transaction the sessions paid by `calls` already record, to keep their ids. */
  async function recordedInternal(
    calls: readonly InternalValueCall[],
    targets: ReadonlyMap<string, PaymentTarget>,
    transactionHash: string,
  ): Promise<{ logIndex: number; to: string; value: bigint }[]> {
    const ids = new Set(calls.flatMap((c) => targets.get(c.to)?.checkoutSessionId ?? []));
    const recorded: { logIndex: number; to: string; value: bigint }[] = [];
    for (const id of ids)
      for (const p of (await reads.session(id))?.payments ?? [])
        if (p.transactionHash.toLowerCase() === transactionHash.toLowerCase() && p.logIndex < -1)
          recorded.push({ logIndex: p.logIndex, to: p.toAddress, value: BigInt(p.amountRaw) });
    return recorded;
  }

  /** Resolves true once `check` holds on the read models, false after the timeout. */
  function settled(check: () => Promise<boolean>): Promise<boolean> {
    return new Promise((resolve, reject) => {
      let done = false;
      let checking = false;
      let again = false;
      const finish = (error: unknown, ok: boolean): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        unsubscribe();
        if (error) reject(error);
        else resolve(ok);
      };
      const run = async (): Promise<void> => {
        if (checking) {
          again = true;
          return;
        }
        checking = true;
        try {
          do {
            again = false;
            if (await check()) {
              finish(null, true);
              return;
            }
          } while (again && !done);
        } catch (error) {
          finish(error, false);
        } finally {
          checking = false;
        }
      };
      const unsubscribe = reads.onAdvanced(() => void run());
      const timer = setTimeout(() => finish(null, false), settleTimeoutMs);
      void run();
    });
  }

  return {
    async recover(request) {
      const offered = rail.network(request.environment, request.chainId);
      if (!offered) {
        throw new ValidationError(
          'chainId',
          `no ${request.environment} network with chain id ${request.chainId} is followed by this Weir${request.environment === 'test' ? ' (test keys see testnets only)' : ' (live keys see mainnets only)'}`,
          'chain_unsupported',
        );
      }
      const network = offered.followed;
      const transactionHash = rail.transactionHash(request.transactionHash, offered);
      const { receipt, block, final } = await readTransaction(offered, transactionHash);
      const transaction = block.transactions[0]!;

      const valueTo = transaction.value > 0n ? transaction.to : null;
      const notNative =
        valueTo !== null && rail.notNativeValue ? await rail.notNativeValue(offered, transaction.hash) : null;
      // Every address the transaction moves value to (native value, then Transfer logs of any token), in the node's form.
      const moves = [
        ...(valueTo !== null && notNative === null ? [{ token: NATIVE, to: valueTo, value: transaction.value }] : []),
        ...receipt.transferLogs.filter((l) => l.value > 0n),
      ];
      // Watched and keyed in the node's form (what extraction reads); looked up in the rail's.
      const watched = createWatchedAddresses();
      const targets = new Map<string, PaymentTarget>();
      for (const to of new Set(moves.map((m) => m.to.toLowerCase()))) {
        const target = await tenantAddress(request, network.network, rail.address(to));
        if (target) {
          watched.add(network.network, to);
          targets.set(to, target);
        }
      }

      // The transfers the follower would have published for these addresses, from the follower's own extraction.
      const nativeAsset = { address: NATIVE, symbol: network.nativeSymbol, decimals: network.nativeDecimals };
      const transfers = extractTransfers({
        network: network.network,
        chainId: network.chainId,
        nativeAsset,
        tokens: network.tokens,
        watched,
        blocks: [block],
        logs: receipt.transferLogs,
        succeededNative: new Set(notNative === null ? [transaction.hash] : []),
        observedAt: new Date(clock.now()).toISOString(),
      });
      const credited: { message: ChainTransferMessage; session: SessionRecord }[] = [];
      const refused: Refused[] = [];
      const sort = async (extracted: ChainTransferMessage): Promise<void> => {
        const session = await reads.session(targets.get(extracted.to.toLowerCase())!.checkoutSessionId);
        if (!session) return;
        const message = rail.transfer(extracted);
        if (acceptedAddress(session, message)) credited.push({ message, session });
        else
          refused.push({
            session,
            reason: `${message.asset.symbol} on ${network.network}, which checkout session ${session.id} does not accept there`,
          });
      };
      for (const extracted of transfers) await sort(extracted);
      const paidOtherwise =
        valueTo !== null && notNative !== null
          ? await tenantAddress(request, network.network, rail.address(valueTo))
          : null;
      const otherwise = paidOtherwise && (await reads.session(paidOtherwise.checkoutSessionId));
      if (otherwise)
        refused.push({ session: otherwise, reason: `${notNative}, which Weir does not take on ${network.network}` });
      refused.push(...(await refusedElsewhere(request, network, moves, targets)));

      // A contract the transaction calls may send native coin on (a smart wallet, a multisig, a batch
      // payout), besides or instead of what the top level and the logs pay: only the call trace shows it.
      let unread: string | undefined;
      if (rail.internalTransfers) {
        const internal = await readInternalCalls(offered, transaction, credited.length + refused.length > 0);
        unread = internal.unread;
        const { calls } = internal;
        for (const to of new Set(calls.map((c) => c.to))) {
          const target = await tenantAddress(request, network.network, rail.address(to));
          if (target) targets.set(to, target);
        }
        // A move a session already records under another index (read from another node) keeps that id: credited
        // once; and no move takes an id any session (of any tenant) records for another.
        const recorded = await recordedInternal(calls, targets, transaction.hash);
        const taken = await reads.recordedIndexes(network.network, transaction.hash);
        for (const call of keepRecordedIndexes(calls, recorded, taken, rail.address)) {
          if (!targets.has(call.to)) continue;
          await sort({
            type: 'transfer',
            network: network.network,
            chainId: network.chainId,
            transactionHash: transaction.hash,
            logIndex: call.logIndex,
            blockNumber: block.number,
            blockHash: block.hash,
            from: call.from,
            to: call.to,
            asset: nativeAsset,
            amount: call.value.toString(),
            reference: null,
            observedAt: new Date(clock.now()).toISOString(),
          });
        }
        const internalMoves = calls.map((c) => ({ token: NATIVE, to: c.to }));
        refused.push(...(await refusedElsewhere(request, network, internalMoves, targets)));
      }

      // What could not be read is said beside what was credited: the merchant knows to recover again.
      const andUnread = (message: string): string => (unread === undefined ? message : `${message}. ${unread}`);
      if (credited.length === 0) {
        const first = refused[0];
        if (first)
          return {
            outcome: 'wrong_token_or_network',
            session: first.session,
            message: andUnread(
              `wrong token or network: the transaction sent ${first.reason}; it cannot be credited, contact support to return the funds`,
            ),
          };
        return {
          outcome: 'wrong_claim',
          message: `wrong claim: transaction ${request.transactionHash} on ${network.network} pays no ${request.checkoutSessionId ? `deposit address of checkout session ${request.checkoutSessionId}` : 'checkout session of this organization'}; use the correct payment link`,
        };
      }

      // Exactly what the follower publishes; the matcher credits and confirms idempotently, so a
      // transfer it already has changes nothing. The `final` gets a message id of its own (the
      // recovered transfers'): the follower may have published this block's `final` a moment ago for
      // another transfer in it, and the bus would drop a second one with the same id as a duplicate,
      // leaving the recovered transfer pending.
      // A block not final yet goes to the network's follower, which publishes the transfers and owes
      // the block a `final` as for its own: no second recovery is needed once it is final.
      const running = final ? undefined : deps.followers?.get(network.network);
      const follower = running?.adoptTransfers
        ? { adoptTransfers: (transfers: readonly ChainTransferMessage[]) => running.adoptTransfers!(transfers) }
        : undefined;
      if (follower) {
        await adopt(
          follower,
          network,
          credited.map((c) => c.message),
        );
      } else {
        const messages: ChainMessage[] = credited.map((c) => c.message);
        if (final)
          messages.push({
            type: 'final',
            network: network.network,
            chainId: network.chainId,
            blockNumber: block.number,
            blockHash: block.hash,
            observedAt: new Date(clock.now()).toISOString(),
          });
        const recoveredIds = deterministicId(`recovered:${credited.map((c) => transferId(c.message)).join(',')}`);
        for (const message of messages) {
          const { subject, data, messageId } = encodeChainMessage(message);
          await bus.publish(subject, data, {
            messageId: message.type === 'final' ? `${messageId}:${recoveredIds}` : messageId,
          });
        }
      }
      const ids = credited.map((c) => transferId(c.message));
      // A transfer a reconciliation credit already counted (Tron) is recorded as covered by it, not as a payment: it stands as that credit.
      const standing = async (index: number): Promise<string> => {
        const id = ids[index]!;
        if ((await reads.paymentStatus(id)) !== null) return id;
        const session = await reads.session(credited[index]!.session.id);
        return session ? coveredBy(session, id) : id;
      };
      const shown = await settled(async () => {
        for (const index of ids.keys()) {
          const status = await reads.paymentStatus(await standing(index));
          // In a final block even a transfer withdrawn before is confirmed, once the matcher has its final.
          if (status === null || (final && status !== 'confirmed')) return false;
        }
        return true;
      });
      // The events that followed the transfer's (completion, late payment) were appended with it: wait for those too.
      if (shown) await reads.caughtUp(settleTimeoutMs);
      const session = (await reads.session(credited[0]!.session.id)) ?? credited[0]!.session;
      const mine = ids
        .filter((_, index) => credited[index]!.session.id === session.id)
        .map((id) => coveredBy(session, id));
      const outcome = classifyRecovery(session, mine, network.confirmations, follower !== undefined);
      return { ...outcome, message: andUnread(outcome.message), session };
    },
  };

  /**
   * Hands the transfers to the follower; one that cannot take them now (starting, stopping, its
   * checkpoint failing) or not within `adoptTimeoutMs` (its RPC node stuck) is a 503. An adoption
   * that completes after the timeout is only logged: adopting is idempotent (the transfers keep
   * their message ids, so the bus drops a second publication within its window and the matcher
   * records a transfer once; owing a height its `final` twice is owing it once), so a retry that
   * adopts them again, before or after the late one, changes nothing more.
   */
  async function adopt(
    follower: Required<Pick<RailFollower, 'adoptTransfers'>>,
    network: EvmFollowerNetwork,
    transfers: readonly ChainTransferMessage[],
  ): Promise<void> {
    const what = `${transfers.length} recovered transfer(s)`;
    const adoption = follower.adoptTransfers(transfers).then(
      (): Adoption => ({ type: 'taken' }),
      (error: unknown): Adoption => ({ type: 'failed', reason: messageOf(error) }),
    );
    const waiting = new AbortController();
    // Rejects once aborted (the adoption won the race): that rejection means nothing.
    const timeout = delay(adoptTimeoutMs, waiting.signal).then(
      () => TIMED_OUT,
      () => TIMED_OUT,
    );
    const outcome = await Promise.race([adoption, timeout]);
    waiting.abort();
    if (outcome.type === 'taken') return;
    if (outcome.type === 'failed') {
      log(`${network.network}: the follower did not take ${what}: ${outcome.reason}`);
      throw new WeirError(
        503,
        'Service Unavailable',
        'follower_unavailable',
        `the follower of ${network.network} cannot take the transfer now; try again in a moment`,
      );
    }
    log(
      `${network.network}: the follower did not take ${what} within ${adoptTimeoutMs} ms (its RPC node may be stuck); answered follower_unavailable`,
    );
    void adoption.then((late) =>
      log(
        late.type === 'taken'
          ? `${network.network}: the follower took ${what} after the recovery had timed out; nothing to undo (adopting again changes nothing)`
          : `${network.network}: the follower failed ${what} after the recovery had timed out: ${late.reason}`,
      ),
    );
    throw new WeirError(
      503,
      'Service Unavailable',
      'follower_unavailable',
      `the follower of ${network.network} did not take the transfer within ${adoptTimeoutMs / 1000} s; try again in a moment`,
    );
  }

  /**
   * Token transfers of the transaction to the tenant's deposit addresses that are not credited: a
   * token the network's registry does not list, or an address of the tenant on another network
   * (a CREATE2 deposit address can be the same on several chains).
   */
  async function refusedElsewhere(
    request: RecoveryRequest,
    network: EvmFollowerNetwork,
    moves: readonly { token: string; to: string }[],
    targets: ReadonlyMap<string, PaymentTarget>,
  ): Promise<Refused[]> {
    const known = new Set([NATIVE, ...network.tokens.map((t) => t.address.toLowerCase())]);
    const others = rail.others(request.environment, network.chainId);
    const refused: Refused[] = [];
    for (const log of moves) {
      const to = log.to.toLowerCase();
      const here = targets.get(to);
      if (here && !known.has(log.token)) {
        const session = await reads.session(here.checkoutSessionId);
        if (session)
          refused.push({
            session,
            reason: `token ${rail.address(log.token)}, which Weir does not take on ${network.network}`,
          });
        continue;
      }
      if (here) continue;
      for (const other of others) {
        const elsewhere = await tenantAddress(request, other, rail.address(to));
        const session = elsewhere ? await reads.session(elsewhere.checkoutSessionId) : null;
        if (session)
          refused.push({
            session,
            reason: `funds on ${network.network} to the deposit address checkout session ${session.id} has on ${other}`,
          });
      }
    }
    return refused;
  }
}

/**
 * An RPC failure as a 502 naming the network and transaction, and each endpoint by scheme and host
 * only (its path or query may hold an API key); any other error as it is.
 */
function upstream(error: unknown, network: EvmFollowerNetwork, transactionHash: string): unknown {
  if (error instanceof RpcEndpointsError || error instanceof MalformedRpcResponseError)
    return new UpstreamError(
      `the RPC endpoints of ${network.network} did not give a usable answer about ${transactionHash}: ${error instanceof RpcEndpointsError ? `${error.method} failed on each: ${error.described}` : error.message}`,
      'chain_unavailable',
    );
  return error;
}

/** The reconciliation credit that counted transfer `id`'s money on `session`, or `id` when none did. */
function coveredBy(session: CheckoutSession, id: string): string {
  return session.reconciledTransfers?.find((t) => t.transferId === id)?.coveredBy ?? id;
}

/** How a hand-over of recovered transfers to a follower ended. */
type Adoption = { type: 'taken' } | { type: 'failed'; reason: string };
const TIMED_OUT = { type: 'timed_out' } as const;

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The outcome for a session once the recovered transfers (`transferIds`) were published: pending
 * transfers are `in_process` (confirmed without another recovery when the network's follower
 * `tracks` their block); confirmed ones leave the session complete, incomplete (`partial`), or
 * closed with a late payment. A transfer withdrawn after a reorg that recovery found on the chain
 * again is `in_process` too: it is credited again, mined in another block, or in the same block
 * once that block is final.
 */
export function classifyRecovery(
  session: CheckoutSession,
  transferIds: readonly string[],
  confirmations: number,
  tracked = false,
): { outcome: 'complete' | 'partial' | 'in_process' | 'late_payment'; message: string } {
  const recovered = session.payments.filter((p) => transferIds.includes(p.transferId));
  if (recovered.length === 0 || recovered.some((p) => p.status === 'pending' || p.status === 'withdrawn')) {
    const then = tracked
      ? 'the checkout session is updated then, with no further recovery'
      : 'recover it again once its block has them';
    return {
      outcome: 'in_process',
      message: `in process: the transaction is detected and waits for network confirmation (${confirmations} block${confirmations === 1 ? '' : 's'}); ${then}`,
    };
  }
  switch (session.status) {
    case 'complete':
      return { outcome: 'complete', message: 'complete payment: the checkout session is complete' };
    case 'incomplete':
      return {
        outcome: 'partial',
        message: `partial payment: ${session.amountReceived} of ${session.amountTotal} received; the payer completes the remaining amount`,
      };
    case 'expired':
    case 'canceled':
      return {
        outcome: 'late_payment',
        message: `late payment: the checkout session was already ${session.status}; the funds are recorded as a late payment`,
      };
    default:
      return {
        outcome: 'in_process',
        message: 'in process: the transaction is recorded and the checkout session is being updated',
      };
  }
}
