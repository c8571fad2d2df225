import { evolveCheckoutSession } from '../../machines/checkout-session.evolve.ts';
import type { CheckoutSession, CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import { evolveOrganization, type Organization, type OrganizationEvent } from '../actors/organization.ts';
import { evolveWebhookEndpoint, type WebhookEndpoint, type WebhookEndpointEvent } from '../actors/webhook-endpoint.ts';
import type { EventStore, RecordedEvent } from '../event-store/event-store.ts';
import { shownHashOn } from '../chain-ingest/tron/networks.ts';
import { intentTransfers } from '../projections/public-views.ts';
import { deterministicId } from '../shared/ids.ts';
import { CHECKPOINT_SIGNED, CHECKPOINT_STREAM, type Checkpoint } from '../audit/checkpoints.ts';
import { AUDIT_CHECKPOINT_EVENT_TYPE, TEST_WEBHOOK_EVENT_TYPE, referenceNameOf } from './webhook-event-types.ts';
import { INVOICE_STREAM_PREFIX, invoiceWebhookPayloadOf, invoiceWebhookTypeOf } from './invoice-webhook-events.ts';
import {
  discountBeforeCreation,
  SUBSCRIPTION_STREAM_PREFIX,
  subscriptionPayloadOf,
  subscriptionWebhookTypeOf,
} from './subscription-webhook-events.ts';

export const WEBHOOK_API_VERSION = '2026-11-01';

/**
 * How the API shows a checkout session and its payment intent (the networks of its assets, from the
 * configuration): a webhook's `data.object` is the same object the API answers.
 */
export type RecordPresenters = {
  checkoutSession(session: CheckoutSession): Promise<PresentedSession>;
  paymentIntent(session: CheckoutSession): Promise<object>;
};
type PresentedSession = { id: string; paymentIntent: { transactions: readonly object[] } };

/** The API's presenters of a configuration: they need its public URL (network icons live there). */
export type PresentersAt = (publicUrl: string) => {
  checkoutSession(session: CheckoutSession): PresentedSession;
  paymentIntent(session: CheckoutSession): object;
};

/**
 * Presenters built at once when the public URL is known before the server listens (configured, or a
 * fixed port), else once `listening` tells it: renders wait till then (the dispatcher gives up a render
 * still waiting when it stops).
 */
export function presentersOnceKnown(
  build: PresentersAt,
  publicUrl: string | null,
): { present: RecordPresenters; listening(publicUrl: string): void } {
  let known: (url: string) => void = () => {};
  const presenters =
    publicUrl === null
      ? new Promise<string>((resolve) => {
          known = resolve;
        }).then(build)
      : Promise.resolve(build(publicUrl));
  return {
    present: {
      checkoutSession: async (session) => (await presenters).checkoutSession(session),
      paymentIntent: async (session) => (await presenters).paymentIntent(session),
    },
    listening: (url) => known(url),
  };
}

/** A public event without its payload: what a delivery needs to be scheduled. */
export type PublicEventRef = { id: string; type: string; object: string; created: number };

/** Where a public event's payload comes from: the log event that caused it. */
export type PublicEventSource = { streamId: string; revision: number };

/** Ids are derived from the log event, so a replay never mints a second id for the same fact. */
const publicEventId = (logEventId: string, type: string) => deterministicId(`webhook-event:${logEventId}:${type}`);

const ref = (event: RecordedEvent, type: string, object: string): PublicEventRef => ({
  id: publicEventId(event.id, type),
  type,
  object,
  created: Date.parse(event.metadata.occurredAt),
});

const SESSION_EVENTS: Record<string, [string, string][]> = {
  CheckoutSessionCompleted: [
    ['payment_intent.succeeded', 'paymentIntent'],
    ['checkout_session.completed', 'checkoutSession'],
  ],
  CheckoutSessionExpired: [
    ['checkout_session.expired', 'checkoutSession'],
    ['payment_intent.canceled', 'paymentIntent'],
  ],
  CheckoutSessionCanceled: [
    ['checkout_session.canceled', 'checkoutSession'],
    ['payment_intent.canceled', 'paymentIntent'],
  ],
  LatePaymentReceived: [['checkout_session.late_payment', 'checkoutSession']],
  // Money beyond a completed session's total: the merchant owes the payer a refund of it.
  OverpaymentReceived: [['checkout_session.overpayment', 'checkoutSession']],
};

/** The session events that carry one transfer, and the field that shows it beside the session. */
const TRANSFER_FIELDS: Readonly<Record<string, string>> = {
  'checkout_session.late_payment': 'latePayment',
  'checkout_session.overpayment': 'overpayment',
};

/** A withdrawal that leaves the intent needing a payment again (see `PaymentWithdrawn.paymentFailed`). */
const PAYMENT_FAILED = { type: 'payment_intent.payment_failed', object: 'paymentIntent' } as const;

const AUDIT_CHECKPOINT = { type: AUDIT_CHECKPOINT_EVENT_TYPE, object: 'auditCheckpoint' } as const;

const ORGANIZATION_EVENTS: Record<string, string> = {
  WithdrawalAddressAdded: 'withdrawal_address.created',
  WithdrawalAddressUpdated: 'withdrawal_address.updated',
  WithdrawalAddressMarkedDefault: 'withdrawal_address.updated',
  WithdrawalAddressRemoved: 'withdrawal_address.deleted',
};

/**
 * The kinds of public event a log event gives rise to. This runs for every event of every replay,
 * so it is cheap: no ids (hashed only for events an endpoint receives) and no payloads (rendered
 * from the log when sent).
 */
export function publicEventKindsOf(event: RecordedEvent): { type: string; object: string }[] {
  if (event.streamId.startsWith('checkout_session-')) {
    if (event.type === 'PaymentWithdrawn')
      return (event.data as { paymentFailed?: unknown }).paymentFailed === true ? [PAYMENT_FAILED] : [];
    return (SESSION_EVENTS[event.type] ?? []).map(([type, object]) => ({ type, object }));
  }
  if (event.streamId.startsWith('organization-')) {
    const type = ORGANIZATION_EVENTS[event.type];
    return type ? [{ type, object: 'withdrawalAddress' }] : [];
  }
  if (event.streamId.startsWith(INVOICE_STREAM_PREFIX)) {
    const type = invoiceWebhookTypeOf(event);
    return type ? [{ type, object: 'invoice' }] : [];
  }
  if (event.streamId.startsWith(SUBSCRIPTION_STREAM_PREFIX)) {
    const type = subscriptionWebhookTypeOf(event);
    return type ? [{ type, object: 'subscription' }] : [];
  }
  if (event.streamId === CHECKPOINT_STREAM && event.type === CHECKPOINT_SIGNED) return [AUDIT_CHECKPOINT];
  return [];
}

/** One public event of a log event, with its id. */
export const publicEventOf = (event: RecordedEvent, kind: { type: string; object: string }): PublicEventRef =>
  ref(event, kind.type, kind.object);

/** The id of the test event a `POST /webhook-endpoints/{id}/test` asked for as `testId`. */
export const testEventIdOf = (testId: string): string => deterministicId(`webhook-test:${testId}`);

/** The test event of `POST /webhook-endpoints/{id}/test`, for that endpoint only. */
export function testEventOf(event: RecordedEvent & { data: { testId?: unknown } }): PublicEventRef {
  return {
    id: testEventIdOf(String(event.data.testId)),
    type: TEST_WEBHOOK_EVENT_TYPE,
    object: 'webhookEndpoint',
    created: Date.parse(event.metadata.occurredAt),
  };
}

/** Why the intent's attempt failed: the transfer it waited for was withdrawn from the chain. */
function withdrawalError(session: CheckoutSession, source: RecordedEvent) {
  const { transferId, reason } = source.data as { transferId: string; reason: string };
  const payment = session.payments.find((p) => p.transferId === transferId);
  return {
    type: 'chain_error',
    code: 'payment_withdrawn',
    message: `the transfer the payment intent waited for was withdrawn (${reason}); it needs a payment again`,
    transactionHash: payment ? shownHashOn(payment.chainId, payment.transactionHash) : null,
    network: payment?.network ?? null,
    blockNumber: payment?.blockNumber ?? null,
  };
}

function fold<S, E>(events: RecordedEvent[], evolve: (state: S | null, event: E) => S | null): S | null {
  let state: S | null = null;
  for (const event of events) state = evolve(state, event as unknown as E);
  return state;
}

/** The payload of a public event: the record as it was right after the source event, as the API shows it. */
async function payloadOf(
  eventStore: EventStore,
  history: RecordedEvent[],
  source: RecordedEvent,
  type: string,
  present: RecordPresenters,
): Promise<unknown> {
  if (source.streamId.startsWith('checkout_session-')) {
    const session = fold<CheckoutSession, CheckoutSessionEvent>(history, evolveCheckoutSession);
    if (!session) throw new Error(`${source.streamId} has no session at revision ${source.revision}`);
    if (type === PAYMENT_FAILED.type)
      return { ...(await present.paymentIntent(session)), lastPaymentError: withdrawalError(session, source) };
    if (type.startsWith('payment_intent.')) return present.paymentIntent(session);
    const view = await present.checkoutSession(session);
    const field = TRANSFER_FIELDS[type];
    if (field !== undefined) {
      // By its place among the intent's transactions: they show hashes as the network's tools do
      // (a Tron txID bare), and one transaction may carry several transfers.
      const transferId = (source.data as { transferId?: string }).transferId;
      const at = intentTransfers(session).findIndex((p) => p.transferId === transferId);
      return { ...view, [field]: view.paymentIntent.transactions[at] ?? null };
    }
    return view;
  }
  if (source.streamId.startsWith('organization-')) {
    const typed = source as unknown as OrganizationEvent;
    if (typed.type === 'WithdrawalAddressAdded') return typed.data.withdrawalAddress;
    if (typed.type === 'WithdrawalAddressRemoved') return { id: typed.data.id, deleted: true };
    const org = fold<Organization, OrganizationEvent>(history, evolveOrganization);
    const id = (typed.data as { id: string }).id;
    return org?.withdrawalAddresses.find((w) => w.id === id) ?? { id };
  }
  if (source.streamId.startsWith('webhook_endpoint-')) {
    const endpoint = fold<WebhookEndpoint, WebhookEndpointEvent>(history, evolveWebhookEndpoint);
    return {
      id: endpoint?.id,
      url: endpoint?.url,
      description: endpoint?.description,
      message: 'This is a test event from Weir.',
    };
  }
  if (source.streamId.startsWith(INVOICE_STREAM_PREFIX)) return invoiceWebhookPayloadOf(eventStore, history);
  if (source.streamId.startsWith(SUBSCRIPTION_STREAM_PREFIX))
    return subscriptionPayloadOf(history, await discountBeforeCreation((id) => eventStore.readStream(id), source));
  if (source.streamId === CHECKPOINT_STREAM) {
    const { position, hash, signedAt, publicKey, signature } = source.data as Checkpoint;
    return { position, hash, signedAt, publicKey, signature };
  }
  throw new Error(`no public payload for events of ${source.streamId}`);
}

/**
 * The exact bytes delivered for a public event, rendered from the log (the source stream folded up
 * to the source event) and the configuration the presenters show (public URL, networks offered):
 * the same on every attempt while that configuration stays, after a restart and a replay too.
 * `livemode` is the receiving endpoint's environment: a receiver serving a test and a live endpoint
 * tells them apart by it (an audit checkpoint, no tenant's, goes to both).
 */
export async function renderWebhookBody(
  eventStore: EventStore,
  source: PublicEventSource,
  event: PublicEventRef & { livemode: boolean },
  present: RecordPresenters,
): Promise<string> {
  const history = (await eventStore.readStream(source.streamId)).filter((e) => e.revision <= source.revision);
  const last = history[history.length - 1];
  if (!last || last.revision !== source.revision)
    throw new Error(`${source.streamId} has no event at revision ${source.revision}`);
  // Made by the kind, whichever of its names the endpoint receives it under.
  const object = await payloadOf(eventStore, history, last, referenceNameOf(event.type), present);
  return JSON.stringify({
    id: event.id,
    apiVersion: WEBHOOK_API_VERSION,
    created: event.created,
    livemode: event.livemode,
    object: event.object,
    type: event.type,
    data: { object },
  });
}
