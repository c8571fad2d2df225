import { checkoutSessionAggregate } from '../../machines/checkout-session.aggregate.ts';
import type { CheckoutSessionCommand } from '../../machines/checkout-session.decide.ts';
import { NOT_IN_FINAL_BLOCK, type CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import type { CommandHandler } from '../actors/command-handler.ts';
import { transferId } from '../chain-ingest/chain-messages.ts';
import type { PaymentIntents, PaymentTarget, PendingPayment, RecoveryReads } from '../chain-ingest/payment-intents.ts';
import type { WatchedAddresses } from '../chain-ingest/watched-addresses.ts';
import type { Environment, EventStore } from '../event-store/event-store.ts';
import { depositAddressKey, settledBlockKey } from '../projections/checkout-sessions.projection.ts';
import {
  COLLECTIONS,
  type ChainPaymentDoc,
  type CheckoutSessionDoc,
  type DepositAddressDoc,
  type SettledBlockDoc,
} from '../projections/collections.ts';
import type { Projection } from '../projections/projection.ts';
import type { ProjectionRunner } from '../projections/projection-runner.ts';
import type { Collection, ReadStore } from '../read-store/read-store.ts';

/** The session a deposit address belongs to, by network and address. */
const targetLookup =
  (depositAddresses: Collection<DepositAddressDoc>) =>
  async (network: string, address: string): Promise<PaymentTarget | null> => {
    const doc = await depositAddresses.get(depositAddressKey(network, address));
    return doc === null
      ? null
      : { checkoutSessionId: doc.checkoutSessionId, organizationId: doc.organizationId, environment: doc.environment };
  };

/**
 * Matches a block hash that is one of `hashes` in any case, as the deciders and the matcher compare
 * them: a reorg or final naming a block in other case than its transfer's message still finds it.
 */
const anyOfHashes = (hashes: readonly string[]) => ({
  $regex: `^(?:${hashes.map((hash) => hash.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})$`,
  $options: 'i',
});

/** A transfer seen at height `blockNumber`: in the block it is in now, or one a reorg took before (`seenIn`). */
const seenAtHeight = (blockNumber: number) => ({ $or: [{ blockNumber }, { 'seenIn.number': blockNumber }] });

/**
 * chain-ingest's payment port over the read models (deposit addresses, sessions, chain payments)
 * and the checkout session's commands, sent as `system:matcher`.
 */
export function createPaymentIntents(deps: {
  readStore: ReadStore;
  commands: CommandHandler;
  projections: Pick<ProjectionRunner, 'waitFor'>;
  /** The log's head: finality and reorgs are looked up once the read models include everything recorded before them. */
  eventStore?: Pick<EventStore, 'headPosition'>;
}): PaymentIntents {
  const { readStore, commands, projections } = deps;
  /**
   * Waits until these read models hold the whole log as of now. A transfer recorded by another
   * instance (or by this one before a kill, its message then redelivered as a repeat that appends
   * nothing) is in the log but maybe not yet here: its final must not find it missing and leave it
   * pending for good. A timeout throws, so the message is delivered again.
   */
  const caughtUp = async (): Promise<void> => {
    const head = await deps.eventStore?.headPosition();
    if (head !== undefined && head !== null) await projections.waitFor(head, 30_000);
  };
  const depositAddresses = readStore.collection<DepositAddressDoc>(COLLECTIONS.depositAddresses);
  const payments = readStore.collection<ChainPaymentDoc>(COLLECTIONS.chainPayments);
  const sessions = readStore.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions);
  const settledBlocks = readStore.collection<SettledBlockDoc>(COLLECTIONS.settledBlocks);
  /**
   * The settled transfers of `network` seen in block `hash`: its settled block read by its key
   * (network and block), then each transfer by its id. Every settled transfer ever recorded is
   * never read: only what this block holds. Still settled and still seen in it is checked again.
   */
  const settledIn = async (network: string, hash: string): Promise<ChainPaymentDoc[]> => {
    const block = await settledBlocks.get(settledBlockKey(network, hash));
    if (block === null) return [];
    const wanted = hash.toLowerCase();
    const found = await Promise.all(block.transferIds.map((id) => payments.get(id)));
    return found.filter(
      (doc): doc is ChainPaymentDoc =>
        doc?.status === 'settled' &&
        doc.network === network &&
        [doc.blockHash, ...(doc.seenIn ?? []).map((b) => b.hash)].some((h) => h.toLowerCase() === wanted),
    );
  };
  const pending = (docs: ChainPaymentDoc[]): PendingPayment[] =>
    docs.map((doc) => ({
      transferId: doc._id,
      blockNumber: doc.blockNumber,
      blockHash: doc.blockHash,
      ...(doc.seenIn ? { seenIn: doc.seenIn } : {}),
      checkoutSessionId: doc.checkoutSessionId,
      organizationId: doc.organizationId,
      environment: doc.environment,
    }));

  async function send(target: PaymentTarget, command: CheckoutSessionCommand, causationId: string): Promise<void> {
    const result = await commands.handle(checkoutSessionAggregate, target.checkoutSessionId, command, {
      organizationId: target.organizationId,
      environment: target.environment as Environment,
      actor: 'system:matcher',
      causationId,
    });
    // Later messages (finality, reorgs) look transfers up in the read models: wait until they include this one.
    if (result.position !== null) await projections.waitFor(result.position, 30_000);
  }

  return {
    targetAt: targetLookup(depositAddresses),
    async sessionAddresses(checkoutSessionId) {
      return (await sessions.get(checkoutSessionId))?.addresses ?? null;
    },
    async pendingInBlocks(network, blockHashes) {
      // No blocks name no transfer (an empty alternation would match a payment with no block hash).
      if (blockHashes.length === 0) return [];
      await caughtUp();
      return pending(await payments.find({ network, blockHash: anyOfHashes(blockHashes), status: 'pending' }));
    },
    async pendingAtHeight(network, blockNumber) {
      await caughtUp();
      return pending(await payments.find({ network, status: 'pending', ...seenAtHeight(blockNumber) }));
    },
    async withdrawnAtFinal(network, block) {
      await caughtUp();
      // Withdrawn ones seen in the block or at its height, narrowed by their status (an indexed
      // field; a final settles them, so they stay few); settled ones only if seen in the block
      // itself (a reorg deeper than the confirmations can bring back a block a final passed over),
      // by the block's key: they only ever grow in number.
      const hash = anyOfHashes([block.hash]);
      const [withdrawn, settled] = await Promise.all([
        payments.find({
          network,
          status: 'withdrawn',
          $or: [{ blockHash: hash }, { 'seenIn.hash': hash }, ...seenAtHeight(block.number).$or],
        }),
        settledIn(network, block.hash),
      ]);
      return pending([...withdrawn, ...settled]);
    },
    recordTransfer: (target, payment, causationId) => send(target, { type: 'RecordTransfer', payment }, causationId),
    confirmTransfer: (target, transferId, blockHash, causationId) =>
      send(target, { type: 'ConfirmTransfer', transferId, blockHash }, causationId),
    withdrawTransfer: (target, transferId, reason, causationId) =>
      send(target, { type: 'WithdrawTransfer', transferId, reason }, causationId),
    giveUpTransfer: (target, transferId, causationId) =>
      send(target, { type: 'WithdrawTransfer', transferId, reason: NOT_IN_FINAL_BLOCK, settled: true }, causationId),
    reinstateTransfer: (target, transferId, blockHash, causationId) =>
      send(target, { type: 'ReinstateTransfer', transferId, blockHash }, causationId),
  };
}

const RECORDED_PAGE = 500;

/** Payment recovery's reads over the read models, and its wait for them to show the matcher's work. */
export function createRecoveryReads(deps: {
  readStore: ReadStore;
  projections: Pick<ProjectionRunner, 'waitFor' | 'onAdvanced'>;
  eventStore: Pick<EventStore, 'headPosition'>;
}): RecoveryReads {
  const { readStore, projections, eventStore } = deps;
  const depositAddresses = readStore.collection<DepositAddressDoc>(COLLECTIONS.depositAddresses);
  const payments = readStore.collection<ChainPaymentDoc>(COLLECTIONS.chainPayments);
  const sessions = readStore.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions);
  return {
    targetAt: targetLookup(depositAddresses),
    session: (checkoutSessionId) => sessions.get(checkoutSessionId),
    async paymentStatus(transferId) {
      const status = (await payments.get(transferId))?.status ?? null;
      // Settled is withdrawn for good: recovery tells the two apart no more than the session does.
      return status === 'settled' ? 'withdrawn' : status;
    },
    async recordedIndexes(network, transactionHash) {
      // A chain payment's id is its transfer id, network:hash:index: the transaction's are one range
      // of ids, read in pages sorted by _id (a range the stores read by their key, not a scan).
      const prefix = transferId({ network, transactionHash, logIndex: 0 }).slice(0, -1);
      const indexes: number[] = [];
      for (let after = prefix; ; ) {
        const page = await payments.find(
          { _id: { $gt: after, $lt: `${prefix.slice(0, -1)};` } },
          { sort: { _id: 1 }, limit: RECORDED_PAGE },
        );
        for (const doc of page) indexes.push(Number(doc._id.slice(prefix.length)));
        if (page.length < RECORDED_PAGE) return indexes.filter(Number.isSafeInteger);
        after = page[page.length - 1]!._id;
      }
    },
    onAdvanced: (listener) => projections.onAdvanced(() => listener()),
    async caughtUp(timeoutMs) {
      const head = await eventStore.headPosition();
      if (head !== null) await projections.waitFor(head, timeoutMs);
    },
  };
}

/**
 * Keeps a WatchedAddresses set current: every session's addresses are watched from the moment
 * its creation is in the log. Load existing ones from the read store first (a durable read store
 * resumes from a checkpoint, so older sessions never pass through `apply` again).
 */
const LOAD_PAGE = 5000;

export function watchedAddressesProjection(
  watched: WatchedAddresses,
): Projection & { load(store: ReadStore): Promise<void> } {
  return {
    name: 'watched_addresses',
    collections: [],
    async apply(event) {
      if (event.type !== 'CheckoutSessionCreated') return;
      const typed = event as unknown as CheckoutSessionEvent & { type: 'CheckoutSessionCreated' };
      for (const address of typed.data.session.addresses) watched.add(address.network, address.paymentAddress);
    },
    async load(store) {
      // In pages by _id: a million sessions' addresses are never all parsed at once.
      const addresses = store.collection<DepositAddressDoc>(COLLECTIONS.depositAddresses);
      for (let after: string | null = null; ; ) {
        const page: DepositAddressDoc[] = await addresses.find(after === null ? {} : { _id: { $gt: after } }, {
          sort: { _id: 1 },
          limit: LOAD_PAGE,
        });
        for (const doc of page) watched.add(doc.network, doc.address);
        if (page.length < LOAD_PAGE) return;
        after = page[page.length - 1]!._id;
      }
    },
  };
}
