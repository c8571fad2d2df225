import type { OrganizationEvent, WithdrawalAddress } from '../actors/organization.ts';
import type { RecordedEvent } from '../event-store/event-store.ts';
import { deterministicId } from '../shared/ids.ts';
import type { CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import { COLLECTIONS, type CheckoutSessionDoc, type OrganizationDoc } from '../projections/collections.ts';
import { publicCheckoutSession } from '../projections/public-views.ts';

export const WEBHOOK_API_VERSION = '2026-11-01';

/** A public event about to be delivered: the envelope without its id-independent parts. */
export type PublicEvent = { id: string; type: string; object: string; created: number; data: { object: unknown } };

/** The delivered body, serialized once so every attempt sends the same bytes. */
export const envelopeBody = (event: PublicEvent): string =>
  JSON.stringify({ id: event.id, apiVersion: WEBHOOK_API_VERSION, created: event.created, object: event.object, type: event.type, data: event.data });

/** Ids are derived from the log event, so a replay never mints a second id for the same fact. */
const publicEventId = (logEventId: string, type: string) => deterministicId(`webhook-event:${logEventId}:${type}`);

function make(event: RecordedEvent, type: string, object: string, data: unknown): PublicEvent {
  return { id: publicEventId(event.id, type), type, object, created: Date.parse(event.metadata.occurredAt), data: { object: data } };
}

/**
 * The public events a log event gives rise to. It is called by the deliveries projection right
 * after the other read models have applied the same event, so documents are as of that event.
 */
export async function publicEventsOf(event: RecordedEvent, store: ReadStore): Promise<PublicEvent[]> {
  if (event.streamId.startsWith('checkout_session-')) {
    const typed = event as unknown as CheckoutSessionEvent;
    const relevant = ['CheckoutSessionCompleted', 'CheckoutSessionExpired', 'CheckoutSessionCanceled', 'LatePaymentReceived'];
    if (!relevant.includes(typed.type)) return [];
    const doc = await store.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions).get(event.streamId.slice('checkout_session-'.length));
    if (!doc) return [];
    const session = publicCheckoutSession(doc);
    const intent = { ...session.paymentIntent, checkoutSessionId: session.id };
    switch (typed.type) {
      case 'CheckoutSessionCompleted':
        return [make(event, 'payment_intent.succeeded', 'paymentIntent', intent), make(event, 'checkout_session.completed', 'checkoutSession', session)];
      case 'CheckoutSessionExpired':
        return [make(event, 'checkout_session.expired', 'checkoutSession', session), make(event, 'payment_intent.canceled', 'paymentIntent', intent)];
      case 'CheckoutSessionCanceled':
        return [make(event, 'checkout_session.canceled', 'checkoutSession', session), make(event, 'payment_intent.canceled', 'paymentIntent', intent)];
      case 'LatePaymentReceived': {
        const payment = intent.transactions.find((t) => t.transactionHash && doc.payments.some((p) => p.transferId === typed.data.transferId && p.transactionHash === t.transactionHash));
        return [make(event, 'checkout_session.late_payment', 'checkoutSession', { ...session, latePayment: payment ?? null })];
      }
      default:
        return [];
    }
  }
  if (event.streamId.startsWith('organization-')) {
    const typed = event as unknown as OrganizationEvent;
    const org = await store.collection<OrganizationDoc>(COLLECTIONS.organizations).get(event.streamId.slice('organization-'.length));
    const find = (id: string): WithdrawalAddress | undefined => org?.withdrawalAddresses.find((w) => w.id === id);
    switch (typed.type) {
      case 'WithdrawalAddressAdded':
        return [make(event, 'withdrawal_address.created', 'withdrawalAddress', typed.data.withdrawalAddress)];
      case 'WithdrawalAddressUpdated':
      case 'WithdrawalAddressMarkedDefault':
        return [make(event, 'withdrawal_address.updated', 'withdrawalAddress', find(typed.data.id) ?? { id: typed.data.id })];
      case 'WithdrawalAddressRemoved':
        return [make(event, 'withdrawal_address.deleted', 'withdrawalAddress', { id: typed.data.id, deleted: true })];
      default:
        return [];
    }
  }
  return [];
}
