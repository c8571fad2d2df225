import { NOT_IN_FINAL_BLOCK, type SeenBlock, type SessionAddress } from '../../machines/checkout-session.types.ts';
import type { Bus, BusMessage, Consumer } from '../bus/bus.ts';
import { createSystemClock, type Clock } from '../shared/clock.ts';
import { fromChainUnits } from '../shared/money.ts';
import { noMetrics, type Metrics } from '../shared/metrics.ts';
import {
  chainSubjects,
  ChainMessageError,
  ofTransaction,
  parseChainMessage,
  transferId,
  type ChainFinalMessage,
  type ChainMessage,
  type ChainReorgMessage,
  type ChainTransferMessage,
} from './chain-messages.ts';
import type { PaymentIntents, PendingPayment } from './payment-intents.ts';

/** What a transfer names its session by: the Solana Pay reference where the rail uses one, else the address paid. */
export const paymentTargetOf = (transfer: Pick<ChainTransferMessage, 'to'> & { reference?: string | null }): string =>
  transfer.reference ?? transfer.to;

/** Every block a recorded transfer was seen in: the one it is in now, and those a reorg took before (`seenIn`). */
const sightingsOf = (payment: PendingPayment): SeenBlock[] => [
  { number: payment.blockNumber, hash: payment.blockHash },
  ...(payment.seenIn ?? []),
];

/** The session's address that accepts this transfer (its network, deposit address and asset); undefined when the session does not take that asset there. */
export function acceptedAddress(
  session: { addresses: readonly SessionAddress[] },
  transfer: Pick<ChainTransferMessage, 'network' | 'to' | 'asset'> & { reference?: string | null },
): SessionAddress | undefined {
  // A rail that identifies payments by reference (Solana Pay) names the session by it, not by `to`.
  const target = paymentTargetOf(transfer);
  return session.addresses.find(
    (a) =>
      a.network === transfer.network &&
      a.paymentAddress.toLowerCase() === target.toLowerCase() &&
      a.asset.address.toLowerCase() === transfer.asset.address.toLowerCase(),
  );
}

/**
 * A chain message whose handling keeps failing: the bus delivers a network's chain messages in
 * order, so every later one of that network waits behind it (other networks go on). `since` is
 * when (on the matcher's clock) it first failed; `error` is the last error's message.
 */
export type FailingChainMessage = {
  network: string;
  subject: string;
  messageId: string | null;
  deliveries: number;
  since: number;
  error: string;
};

export type MatcherStatus = {
  running: boolean;
  /** The networks whose chain messages it handles, one durable consumer each. */
  networks: string[];
  acknowledged: number;
  /** The message that holds up each network that is held up, oldest failure first. */
  failing: FailingChainMessage[];
};

export type Matcher = {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Whether it consumes, how many messages it handled, and the messages that hold it up, if any do. */
  status(): MatcherStatus;
  /**
   * True when the matcher has handled (and the bus acknowledged) every chain message of `networks`
   * (default: all of its own) published before the call; false before start(). A network it does
   * not handle has nothing to wait for. A network's false answer is remembered until the matcher
   * acknowledges its next message (only that can make it true), so asking again meanwhile costs
   * nothing.
   */
  drained(networks?: Iterable<string>): Promise<boolean>;
};

/** The durable consumer of one network's chain messages. */
export const matcherDurableName = (network: string) => `weir-matcher-${network}`;
/**
 * The one durable of every network's messages that Weir used before the matcher consumed each
 * network on its own: the networks' durables start where it stood, and it is then deleted.
 */
export const SHARED_MATCHER_DURABLE_NAME = 'weir-matcher';

/**
 * Turns chain observations into commands on payment intents: a transfer to a session's deposit
 * address is recorded on that session, a reorg withdraws the transfers of the removed blocks, and
 * finality confirms them (and credits again those withdrawn with a block that turns out final). Commands are idempotent, so a redelivered message changes nothing.
 *
 * Each network's messages are consumed by their own durable consumer, in order: a message that
 * keeps failing holds up the later messages of its network only, never another network's payments.
 */
export function createMatcher(deps: {
  bus: Bus;
  /** Sessions by deposit address, pending transfers, and the commands that credit them. */
  intents: PaymentIntents;
  log?: (line: string) => void;
  /** The networks whose `chain.<network>.*` messages to handle: those the rails offer. */
  networks: readonly string[];
  /** Dates `status().failing`; the system clock unless given. */
  clock?: Clock;
  /** Called each time the bus has acknowledged a message the matcher handled (e.g. to retry the timers waiting for `drained()`). */
  onHandled?: () => void;
  metrics?: Metrics;
}): Matcher {
  const { bus, intents } = deps;
  const networks = [...new Set(deps.networks)].sort();
  const log = deps.log ?? ((line: string) => console.warn(`[matcher] ${line}`));
  const clock = deps.clock ?? createSystemClock();
  /** Each network's consumer, while started. */
  let consumers: Map<string, Consumer> | null = null;
  /** Messages acknowledged so far; per network, the count when the bus last answered "not drained". */
  let acknowledged = 0;
  const notDrainedAt = new Map<string, number>();
  const failing = new Map<string, FailingChainMessage>();
  const metrics = deps.metrics ?? noMetrics;
  // Asked of the bus at scrape time only: the matcher's own path pays nothing for it.
  metrics.gauge(
    {
      name: 'weir_matcher_queue_depth',
      help: 'Chain messages of a network the matcher has not acknowledged yet (waiting, being handled, or waiting to be redelivered)',
      labelNames: ['network'],
    },
    async () => {
      const running = consumers;
      if (running === null) return [];
      return Promise.all(
        [...running].map(async ([network, consumer]) => ({ labels: { network }, value: await consumer.backlog() })),
      );
    },
  );
  metrics.total(
    {
      name: 'weir_matcher_messages_handled_total',
      help: 'Chain messages the matcher handled and the bus acknowledged',
    },
    () => [{ labels: {}, value: acknowledged }],
  );

  async function onTransfer(message: ChainTransferMessage, messageId: string): Promise<void> {
    const target = await intents.targetAt(message.network, paymentTargetOf(message));
    if (!target) return;
    const addresses = await intents.sessionAddresses(target.checkoutSessionId);
    const offered = addresses ? acceptedAddress({ addresses }, message) : undefined;
    if (!offered) {
      log(
        `transfer ${transferId(message)} of ${message.asset.symbol} to ${message.to} is not an asset this session accepts; not credited`,
      );
      return;
    }
    const { amount } = fromChainUnits(BigInt(message.amount), offered.asset.decimals);
    await intents.recordTransfer(
      target,
      {
        transferId: transferId(message),
        network: message.network,
        chainId: message.chainId,
        transactionHash: message.transactionHash,
        logIndex: message.logIndex,
        blockNumber: message.blockNumber,
        blockHash: message.blockHash,
        fromAddress: message.from,
        toAddress: message.to,
        asset: offered.asset,
        amountRaw: message.amount,
        amount: amount.toString(),
      },
      messageId,
    );
  }

  /** The transfers a final or reorg speaks for: those of its transaction when it names one, else all. */
  const named = (message: ChainFinalMessage | ChainReorgMessage, payments: PendingPayment[]) => {
    const { transactionHash } = message;
    if (transactionHash === undefined) return payments;
    return payments.filter((p) => ofTransaction(p.transferId, message.network, transactionHash));
  };

  async function onReorg(message: ChainReorgMessage, messageId: string): Promise<void> {
    const affected = named(
      message,
      await intents.pendingInBlocks(
        message.network,
        message.removedBlocks.map((b) => b.hash),
      ),
    );
    // Removed past finality, a block is gone for good: no session waits for its transfers to come back.
    const reason = message.final ? NOT_IN_FINAL_BLOCK : 'reorg';
    for (const payment of affected) await intents.withdrawTransfer(payment, payment.transferId, reason, messageId);
  }

  async function onFinal(message: ChainFinalMessage, messageId: string): Promise<void> {
    // A transfer may have been seen in several blocks (a reorg, or one the follower missed): the
    // final of any of them proves it mined there; another block final at this height ends it only
    // if it was seen at no height above (finals come in height order: those below are past).
    const isFinal = (block: SeenBlock) => block.hash.toLowerCase() === message.blockHash.toLowerCase();
    const goneAt = (payment: PendingPayment) =>
      !sightingsOf(payment).some((block) => isFinal(block) || block.number > message.blockNumber);
    // One transaction's final (Solana) says nothing of the block's other transfers.
    for (const payment of named(message, await intents.pendingAtHeight(message.network, message.blockNumber))) {
      if (sightingsOf(payment).some(isFinal))
        await intents.confirmTransfer(payment, payment.transferId, message.blockHash, messageId);
      else if (goneAt(payment)) await intents.giveUpTransfer(payment, payment.transferId, messageId);
    }
    const withdrawn = named(
      message,
      await intents.withdrawnAtFinal(message.network, {
        number: message.blockNumber,
        hash: message.blockHash,
      }),
    );
    // A transfer withdrawn with this very block was mined after all (the chain came back to the
    // block, or a lagging node had called it gone), maybe after being mined again in a block since
    // reorged away too (A→B→A); its transfer message again would be ignored (a block it was seen
    // in) or dropped by the bus (same id), so its block's final credits it.
    for (const payment of withdrawn.filter((p) => sightingsOf(p).some(isFinal)))
      await intents.reinstateTransfer(payment, payment.transferId, message.blockHash, messageId);
    // One withdrawn that was seen at this height in another block only, and at none above, is gone
    // for good: a session that still waited for it to be mined again (paid in time) stops waiting,
    // and either way it is settled, so no final reads it again. Seen higher too (mined again lower
    // after a reorg, A→B→A), that height's final decides.
    for (const payment of withdrawn.filter(goneAt))
      await intents.giveUpTransfer(payment, payment.transferId, messageId);
  }

  async function handle(network: string, raw: BusMessage): Promise<void> {
    let message: ChainMessage;
    try {
      message = parseChainMessage(raw.subject, raw.data);
    } catch (error) {
      if (error instanceof ChainMessageError) {
        log(`dropped a malformed message on ${raw.subject}: ${error.message}`);
        return;
      }
      throw error;
    }
    const id = raw.messageId ?? `${raw.subject}:${raw.deliveryCount}`;
    try {
      if (message.type === 'transfer') await onTransfer(message, id);
      else if (message.type === 'reorg') await onReorg(message, id);
      else await onFinal(message, id);
    } catch (error) {
      // The same message again (or the first failure): keep when it began to fail.
      const before = failing.get(network);
      const same =
        before !== undefined && before.subject === raw.subject && before.messageId === (raw.messageId ?? null);
      failing.set(network, {
        network,
        subject: raw.subject,
        messageId: raw.messageId ?? null,
        deliveries: raw.deliveryCount,
        since: same ? before.since : clock.now(),
        error: error instanceof Error ? error.message : String(error),
      });
      throw error;
    }
    failing.delete(network);
  }

  return {
    async start() {
      const onAcknowledged = (): void => {
        acknowledged += 1;
        deps.onHandled?.();
      };
      const started = new Map<string, Consumer>();
      try {
        for (const network of networks) {
          started.set(
            network,
            await bus.consume(
              {
                durableName: matcherDurableName(network),
                filterSubject: chainSubjects(network),
                continueFrom: SHARED_MATCHER_DURABLE_NAME,
                onAcknowledged,
              },
              (raw) => handle(network, raw),
            ),
          );
        }
      } catch (error) {
        await Promise.all([...started.values()].map((consumer) => consumer.stop()));
        throw error;
      }
      consumers = started;
      // Every network's durable now stands where the shared one did (or further): it is not needed.
      // Left in place when it cannot be deleted (still consumed here): it only holds a position.
      if (networks.length > 0) {
        await bus.deleteDurable(SHARED_MATCHER_DURABLE_NAME).catch((error: unknown) => {
          log(
            `could not delete the durable consumer "${SHARED_MATCHER_DURABLE_NAME}" of earlier versions (${error instanceof Error ? error.message : String(error)}); it is no longer read`,
          );
        });
      }
      log(
        `handling the chain messages of ${networks.length === 0 ? 'no network (no rail offers one)' : networks.join(', ')}`,
      );
    },
    async stop() {
      const stopping = [...(consumers?.values() ?? [])];
      consumers = null;
      await Promise.all(stopping.map((consumer) => consumer.stop()));
    },
    status() {
      return {
        running: consumers !== null,
        networks,
        acknowledged,
        failing: [...failing.values()].sort((a, b) => a.since - b.since),
      };
    },
    async drained(only) {
      const running = consumers;
      if (running === null) return false;
      const asked = only === undefined ? networks : [...new Set(only)].filter((network) => running.has(network));
      if (asked.some((network) => notDrainedAt.get(network) === acknowledged)) return false;
      const before = acknowledged;
      const answers = await Promise.all(
        asked.map(async (network) => ({ network, drained: await running.get(network)!.drained() })),
      );
      const behind = answers.filter((answer) => !answer.drained);
      // Remembered only if no acknowledgement came in while the bus was asked (it may have changed the answer).
      if (acknowledged === before) for (const { network } of behind) notDrainedAt.set(network, before);
      return behind.length === 0;
    },
  };
}
