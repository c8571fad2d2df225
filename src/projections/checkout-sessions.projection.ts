import { evolveCheckoutSession } from '../../machines/checkout-session.evolve.ts';
import type { CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import type { SubscriptionEvent } from '../../machines/subscription.types.ts';
import type { RecordedEvent } from '../event-store/event-store.ts';
import type { Collection, ReadStore } from '../read-store/read-store.ts';
import {
  COLLECTIONS,
  type ChainPaymentDoc,
  type CheckoutSessionDoc,
  type DepositAddressDoc,
  type SettledBlockDoc,
  type TimerDoc,
} from './collections.ts';
import type { Projection } from './projection.ts';

/** Hex (EVM) addresses are case-insensitive and keyed lowercase; base58 (Solana, Tron) ones are case-sensitive and kept. */
export const depositAddressKey = (network: string, address: string) =>
  `${network}:${/^0x/i.test(address) ? address.toLowerCase() : address}`;
export const EXPIRY_TIMER = 'checkout_session.expire';
/** A block's key in settled blocks: hashes in any case are one block, as the deciders and the matcher compare them. */
export const settledBlockKey = (network: string, blockHash: string) => `${network}:${blockHash.toLowerCase()}`;

/**
 * Lists a settled transfer under every block it was seen in (`settled`), or takes it off them
 * (settled no more: detected again). Each write bears repeating (a batch applied again).
 */
async function listSettled(store: ReadStore, payment: ChainPaymentDoc, settled: boolean): Promise<void> {
  const blocks = store.collection<SettledBlockDoc>(COLLECTIONS.settledBlocks);
  const hashes = new Set([payment.blockHash, ...(payment.seenIn ?? []).map((b) => b.hash)].map((h) => h.toLowerCase()));
  for (const blockHash of hashes) {
    const _id = settledBlockKey(payment.network, blockHash);
    const held = (await blocks.get(_id))?.transferIds ?? [];
    if (held.includes(payment._id) === settled) continue;
    const transferIds = settled ? [...held, payment._id] : held.filter((id) => id !== payment._id);
    if (transferIds.length > 0) await blocks.put({ _id, network: payment.network, blockHash, transferIds });
    else await blocks.delete(_id);
  }
}

/**
 * Checkout sessions, plus the indexes the matcher and the timers need: deposit address ->
 * session, transfer -> session (for reorgs and finality), block -> its settled transfers (for a
 * final that brings its block back), and pending expiries.
 */
export const checkoutSessionsProjection: Projection = {
  name: 'checkout_sessions',
  // 2: what a session received is summed exactly in the asset's units (18-decimal tokens lost their dust
  // before), and a complete session's amountNet is of what payers sent, not of what was asked.
  // 3: money after a session completed short, once recorded as a negative overpayment, reads as late.
  // 4: a transfer seen again after a reorg keeps its first detectedAt, and its chain payment lists the
  // blocks it was seen in before (`seenIn`), which a read store written before that lacks.
  // 5: a payment intent whose transfer a reorg took away stays processing while the session waits
  // for it to be mined again (it read requires_payment_method).
  // 6: a subscription session without a customer names the one its subscription was created with.
  // 7: a payment awaited back after a withdrawal that told payment_failed (logs before that rule)
  // says so (`failureSent`), so giving it up tells no second time.
  // 8: a session's customerDetails keeps the tax ids its customerData gave (`taxIds`).
  // 9: each discount amount keeps its coupon's id (`discountAmounts[].couponId`), as the discount recorded it.
  // 10: a withdrawn transfer that the final at every height it was seen at gave up is `settled`,
  // no longer `withdrawn`, in chain payments: finals read the withdrawn ones only.
  // 11: settled blocks list the settled transfers of each block, for finals to read by their block's
  // key; a withdrawal that changes nothing the API shows (settling a transfer shown withdrawn
  // already) leaves the session's updatedAt as it was.
  // 12: a payment recorded before its session was canceled, and not confirmed then, says so
  // (`seenBeforeCancel`): the pages told it by timestamps, which cannot order a cancel and a payment
  // in the same millisecond.
  // 13: a payment confirmed when its session was marked refunded says so (`coveredByRefundMark`):
  // the pages told what the mark covers by timestamps, as wrong in the mark's millisecond.
  // 14: a payment not confirmed when its session expired says so too, the flag renamed `seenBeforeClose`:
  // an expiry in a log from before it waited for pending payments left money sent before it told as after.
  // 15: each line of a discounted session carries its share of the discount (`amountDiscount`), which
  // the volume report by product takes off.
  // 16: each confirmed payment keeps its share of the fee and gas fee as owed then (`feeShare`): the
  // volume report took it from the session's current gas fee, which a later switch of asset changes.
  version: 16,
  collections: [
    COLLECTIONS.checkoutSessions,
    COLLECTIONS.depositAddresses,
    COLLECTIONS.chainPayments,
    COLLECTIONS.settledBlocks,
    COLLECTIONS.timers,
  ],
  categories: ['checkout_session', 'subscription'],
  async apply(event, store) {
    const sessions = store.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions);
    if (event.streamId.startsWith('subscription-')) return linkSubscriptionCustomer(sessions, event);
    if (!event.streamId.startsWith('checkout_session-')) return;
    const typed = event as unknown as CheckoutSessionEvent;
    const id = event.streamId.slice('checkout_session-'.length);
    const stored = await sessions.get(id);
    // A batch repeated after a crash (or a failed pass) brings events the document already holds:
    // folded in again, a payment would be listed twice. Its other writes below bear repeating.
    const reflected = stored !== null && stored._revision !== undefined && stored._revision >= event.revision;
    const next = reflected
      ? stored
      : evolveCheckoutSession(typed.type === 'CheckoutSessionCreated' ? null : stored, typed);
    if (!next) return;
    if (!reflected) await sessions.put({ ...next, _id: id, _revision: event.revision });
    const tenant = { organizationId: next.organizationId, environment: next.environment, checkoutSessionId: id };
    const timers = store.collection<TimerDoc>(COLLECTIONS.timers);
    const timerId = `${EXPIRY_TIMER}:${id}`;
    switch (typed.type) {
      case 'CheckoutSessionCreated': {
        const addresses = store.collection<DepositAddressDoc>(COLLECTIONS.depositAddresses);
        for (const a of next.addresses) {
          await addresses.put({
            _id: depositAddressKey(a.network, a.paymentAddress),
            network: a.network,
            address: a.paymentAddress,
            ...tenant,
          });
        }
        await timers.put({
          _id: timerId,
          kind: EXPIRY_TIMER,
          recordId: id,
          organizationId: next.organizationId,
          environment: next.environment,
          fireAt: Date.parse(next.expiresAt),
        });
        return;
      }
      case 'PaymentDetected': {
        // The session's record of it lists the blocks it was seen in before: a final one credits it again.
        const p = next.payments.find((payment) => payment.transferId === typed.data.payment.transferId)!;
        const payments = store.collection<ChainPaymentDoc>(COLLECTIONS.chainPayments);
        // Mined again (or credited by its block's final): settled no more.
        const before = await payments.get(p.transferId);
        if (before?.status === 'settled') await listSettled(store, before, false);
        await payments.put({
          _id: p.transferId,
          network: p.network,
          blockNumber: p.blockNumber,
          blockHash: p.blockHash,
          status: 'pending',
          ...(p.seenIn ? { seenIn: p.seenIn } : {}),
          ...tenant,
        });
        return;
      }
      case 'PaymentWithdrawn':
      case 'PaymentConfirmed': {
        const payments = store.collection<ChainPaymentDoc>(COLLECTIONS.chainPayments);
        const doc = await payments.get(typed.data.transferId);
        const status = typed.type === 'PaymentConfirmed' ? 'confirmed' : typed.data.settled ? 'settled' : 'withdrawn';
        if (!doc) return;
        await payments.put({ ...doc, status });
        if (doc.status === 'settled' || status === 'settled') await listSettled(store, doc, status === 'settled');
        return;
      }
      case 'CheckoutSessionPartiallyPaid':
      case 'CheckoutSessionCompleted':
      case 'CheckoutSessionExpired':
      case 'CheckoutSessionCanceled':
        await timers.delete(timerId);
        return;
      default:
        return;
    }
  },
};

/**
 * A subscription session given only `customerData` (or a payment link page's email) has its
 * customer created with its subscription (`workflows/subscription-billing.ts`), after the session:
 * the session then names that customer, so the customer's sessions (the API's `customerId` filter,
 * the dashboard's customer page) include it. Only the read model says so, as for an invoice's
 * subscription (`invoices.projection.ts`); the session's own record keeps its null.
 */
async function linkSubscriptionCustomer(sessions: Collection<CheckoutSessionDoc>, event: RecordedEvent): Promise<void> {
  const typed = event as unknown as SubscriptionEvent;
  if (typed.type !== 'SubscriptionCreated') return;
  const { id, customerId, latestInvoice } = typed.data.subscription;
  if (customerId === null || latestInvoice?.kind !== 'checkout_session') return;
  const doc = await sessions.get(latestInvoice.id);
  if (!doc || doc.customerId !== null || doc.subscriptionId !== id) return;
  if (doc.organizationId !== event.metadata.organizationId) return;
  await sessions.put({ ...doc, customerId });
}
