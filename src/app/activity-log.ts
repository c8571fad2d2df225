import type { EventStore, RecordedEvent } from '../event-store/event-store.ts';
import { categoryOf } from '../projections/projection.ts';
import type { Logger } from '../shared/logger.ts';

/**
 * One structured log line per domain event recorded while Weir runs, read from the event log
 * itself (as the projections and the webhook dispatcher do), so every path that records an event
 * is logged, including ones added later. Each line has a stable `event` field
 * (`payment.detected`, `checkout_session.completed`, `invoice.paid`, …) and ids; never the event's
 * data as a whole (it holds customer details), only the fields picked below.
 */
export type ActivityLog = { start(): Promise<void>; stop(): Promise<void> };

const BATCH = 500;

type Fields = Record<string, unknown>;
type Json = Record<string, unknown>;

const str = (value: unknown): string | undefined =>
  typeof value === 'string'
    ? value
    : typeof value === 'number' || typeof value === 'bigint'
      ? String(value)
      : undefined;
const obj = (value: unknown): Json => (value && typeof value === 'object' ? (value as Json) : {});

/** `CheckoutSessionCompleted` → `completed` under `checkout_session`; `PaymentDetected` → `payment_detected`. */
const snake = (text: string): string => text.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();

/** The id field each category's aggregate id goes in. */
const ID_FIELD: Record<string, string> = {
  checkout_session: 'sessionId',
  invoice: 'invoiceId',
  subscription: 'subscriptionId',
  webhook_delivery: 'deliveryId',
  webhook_endpoint: 'endpointId',
  customer: 'customerId',
  payment_link: 'paymentLinkId',
  api_key: 'apiKeyId',
  mail: 'mailId',
  product: 'productId',
  price: 'priceId',
  coupon: 'couponId',
};

/** Bookkeeping streams: their events are logged at debug only. */
const QUIET_CATEGORIES = new Set(['idempotency', 'invoice_number_claim', 'promotion_code_claim']);

/**
 * Events whose name is not `<category>.<event minus the category's name>`, with the fields of their
 * data worth a line. Events missing here still get a line with their ids. Hashes stay as the log keeps
 * them (a Tron txID `0x…`): the operator matches these lines to the log byte for byte, not to Tronscan.
 */
const DESCRIBED: Record<
  string,
  { event?: string | ((data: Json) => string); fields?: (data: Json) => Fields; level?: 'debug' | 'warn' }
> = {
  CheckoutSessionCreated: {
    fields: (d) => {
      const session = obj(d.session);
      return {
        mode: str(session.mode),
        amountTotal: str(session.amountTotal),
        currency: str(session.currency),
        invoiceId: str(session.invoiceId),
        subscriptionId: str(session.subscriptionId),
        paymentLinkId: str(session.paymentLinkId),
      };
    },
  },
  PaymentMethodSelected: { fields: (d) => ({ amountDue: str(d.amountDue), amountGasFee: str(d.amountGasFee) }) },
  PaymentDetected: {
    event: 'payment.detected',
    fields: (d) => {
      const p = obj(d.payment);
      return {
        transferId: str(p.transferId),
        network: str(p.network),
        chainId: p.chainId,
        txHash: str(p.transactionHash),
        logIndex: p.logIndex,
        blockNumber: p.blockNumber,
        asset: str(obj(p.asset).symbol),
        amount: str(p.amount),
        amountRaw: str(p.amountRaw),
        toAddress: str(p.toAddress),
      };
    },
  },
  PaymentConfirmed: { event: 'payment.confirmed', fields: (d) => ({ transferId: str(d.transferId) }) },
  PaymentWithdrawn: {
    // The final that settles a transfer gives it up for good: for one a reorg withdrew before, a
    // second line named as a withdrawal would read as a second one.
    event: (d) => (d.settled === true ? 'payment.given_up' : 'payment.withdrawn'),
    level: 'warn',
    fields: (d) => ({ transferId: str(d.transferId), reason: str(d.reason), paymentFailed: d.paymentFailed === true }),
  },
  TransferAlreadyReconciled: {
    event: 'payment.already_reconciled',
    fields: (d) => {
      const t = obj(d.transfer);
      return { transferId: str(t.transferId), coveredBy: str(t.coveredBy), amountRaw: str(t.amountRaw) };
    },
  },
  LatePaymentReceived: {
    event: 'payment.late',
    fields: (d) => ({ transferId: str(d.transferId), amount: str(d.amount) }),
  },
  OverpaymentReceived: {
    event: 'payment.overpaid',
    fields: (d) => ({ transferId: str(d.transferId), amount: str(d.amount), amountOverpaid: str(d.amountOverpaid) }),
  },
  CheckoutSessionPartiallyPaid: { fields: (d) => ({ amountReceived: str(d.amountReceived) }) },
  CheckoutSessionCompleted: {
    fields: (d) => ({
      amountReceived: str(d.amountReceived),
      amountOverpaid: str(d.amountOverpaid),
      txHash: str(d.transactionHash),
      partial: d.partial === true,
    }),
  },
  FundsSwept: {
    event: 'sweep.completed',
    fields: (d) => {
      const sweep = obj(d.sweep);
      const deposits = Array.isArray(sweep.transferIds) ? sweep.transferIds.length : 0;
      return {
        network: str(sweep.network),
        chainId: sweep.chainId,
        txHash: str(sweep.transactionHash),
        blockNumber: sweep.blockNumber,
        merchantAddress: str(sweep.merchantAddress),
        deposits,
        outcome: sweep.reverted === true ? 'reverted' : 'swept',
        gasUsed: str(sweep.gasUsed),
        gasCost: str(sweep.gasCost),
        ...(typeof sweep.tron === 'object' && sweep.tron !== null ? { trxBurnt: str(obj(sweep.tron).trxBurnt) } : {}),
      };
    },
  },
  SweepBroadcast: {
    event: 'sweep.broadcast',
    fields: (d) => {
      const broadcast = obj(d.broadcast);
      return { network: str(broadcast.network), txHash: str(broadcast.transactionHash) };
    },
  },
  SweepDropped: {
    event: 'sweep.dropped',
    level: 'warn',
    fields: (d) => ({ network: str(d.network), txHash: str(d.transactionHash), outcome: 'dropped' }),
  },
  TransfersFoundSwept: {
    event: 'sweep.transfers_found',
    fields: (d) => ({
      network: str(d.network),
      txHash: str(d.transactionHash),
      blockNumber: d.blockNumber,
      deposits: Array.isArray(d.transferIds) ? d.transferIds.length : 0,
    }),
  },
  SweepLookUpEnded: {
    event: 'sweep.look_up_ended',
    fields: (d) => ({ network: str(d.network), txHash: str(d.transactionHash) }),
  },
  InvoiceFinalized: { fields: (d) => ({ number: str(d.number) }) },
  // `to` is the customer's address: only whether it was mailed.
  InvoiceSent: { fields: (d) => ({ mailed: d.mailed === true }) },
  InvoicePaymentAttemptStarted: { fields: (d) => ({ checkoutSessionId: str(d.checkoutSessionId) }) },
  InvoicePartialPaymentReceived: {
    fields: (d) => ({
      checkoutSessionId: str(d.checkoutSessionId),
      amountReceived: str(d.amountReceived),
      ...(d.amountGasFee === undefined ? {} : { amountGasFee: str(d.amountGasFee) }),
      // A late payment: money its session received after it expired or was canceled.
      ...(d.transferId === undefined ? {} : { transferId: str(d.transferId) }),
    }),
  },
  InvoicePaid: {
    fields: (d) => ({
      checkoutSessionId: str(d.checkoutSessionId),
      txHash: str(d.transactionHash),
      amountPaid: str(d.amountPaid),
      ...(d.amountGasFee === undefined ? {} : { amountGasFee: str(d.amountGasFee) }),
    }),
  },
  // Paid twice: another session of a paid invoice received money (the merchant refunds it), as `payment.overpaid`.
  InvoicePaymentReceivedAfterPaid: {
    event: 'invoice.overpaid',
    fields: (d) => ({
      checkoutSessionId: str(d.checkoutSessionId),
      amountReceived: str(d.amountReceived),
      ...(d.amountGasFee === undefined ? {} : { amountGasFee: str(d.amountGasFee) }),
      completed: d.completed === true,
      txHash: str(d.transactionHash),
      ...(d.transferId === undefined ? {} : { transferId: str(d.transferId) }),
    }),
  },
  InvoicePaymentFailed: {
    level: 'warn',
    fields: (d) => ({ checkoutSessionId: str(d.checkoutSessionId), reason: str(d.reason) }),
  },
  InvoiceMarkedAsPaid: { fields: (d) => ({ amountPaid: str(d.amountPaid) }) },
  InvoiceReminderSent: { fields: (d) => ({ kind: str(d.kind), days: d.days }) },
  // A renewal Weir could not finalize: the merchant must act (the message is on the invoice).
  InvoiceFinalizationFailed: { level: 'warn', fields: (d) => ({ code: str(d.code), field: str(d.field) }) },
  InvoiceReminderSkipped: { fields: (d) => ({ kind: str(d.kind), days: d.days }) },
  NextRecurringInvoiceUnscheduled: { fields: (d) => ({ nextInvoiceId: str(d.nextInvoiceId), reason: str(d.reason) }) },
  SubscriptionStarted: { fields: (d) => ({ invoiceId: str(d.invoiceId) }) },
  FirstBillDiscounted: {
    fields: (d) => ({
      invoiceId: str(d.invoiceId),
      promotionCodeId: str(d.promotionCodeId),
      amountDiscount: str(d.amountDiscount),
      amountDue: str(d.amountDue),
    }),
  },
  SubscriptionIncompleteExpired: { fields: (d) => ({ invoiceId: str(d.invoiceId) }) },
  // Money for a subscription that never started: the merchant refunds it.
  FirstBillLatePaymentReceived: {
    fields: (d) => ({ invoiceId: str(d.invoiceId), transferId: str(d.transferId), amount: str(d.amount) }),
  },
  RenewalInvoiceIssued: {
    fields: (d) => {
      const bill = obj(d.invoice);
      return { billId: str(bill.id), billKind: str(bill.kind), amountDue: str(bill.amountDue) };
    },
  },
  RenewalPaid: { fields: (d) => ({ invoiceId: str(d.invoiceId) }) },
  RenewalPaymentMissed: { level: 'warn', fields: (d) => ({ invoiceId: str(d.invoiceId) }) },
  RenewalInvoiceDeleted: { fields: (d) => ({ invoiceId: str(d.invoiceId) }) },
  RenewalInvoiceVoided: { fields: (d) => ({ invoiceId: str(d.invoiceId) }) },
  // Its bill is a draft not sent (the merchant must finalize it): said as its invoice's refusal is.
  RenewalInvoiceNotFinalized: { level: 'warn', fields: (d) => ({ invoiceId: str(d.invoiceId) }) },
  RenewalInvoiceFinalized: { fields: (d) => ({ invoiceId: str(d.invoiceId), dueAt: str(d.dueAt) }) },
  SubscriptionCanceled: { fields: (d) => ({ atPeriodEnd: d.atPeriodEnd === true }) },
  // The attempts themselves are logged by the dispatcher, which knows the endpoint and event type.
  WebhookDeliveryAttemptFailed: { level: 'debug' },
  WebhookDeliverySucceeded: { level: 'debug' },
  WebhookDeliveryFailed: { event: 'webhook.delivery_failed', level: 'warn', fields: (d) => ({ attempts: d.attempts }) },
  WebhookDeliveryCanceled: {
    event: 'webhook.delivery_canceled',
    fields: (d) => ({ attempts: d.attempts, reason: str(d.reason) }),
  },
  // What it signed, so a checkpoint made by `weir audit checkpoint --write` is in the log lines too.
  AuditCheckpointSigned: { fields: (d) => ({ signedPosition: str(d.position), signedHash: str(d.hash) }) },
  MailSent: { fields: (d) => ({ kind: str(d.kind) }) },
  MailDeliveryFailed: { level: 'warn', fields: (d) => ({ kind: str(d.kind), attempts: d.attempts }) },
};

/** The `event` name of a recorded event: from the table, or `<category>.<rest of its type>`. */
export function activityNameOf(event: Pick<RecordedEvent, 'type' | 'streamId'> & { data?: unknown }): string {
  const named = DESCRIBED[event.type]?.event;
  if (typeof named === 'function') return named(obj(event.data));
  if (named) return named;
  const category = categoryOf(event.streamId);
  const type = snake(event.type);
  return `${category}.${type.startsWith(`${category}_`) ? type.slice(category.length + 1) : type}`;
}

/** The fields of one event's line (no message): its name, ids and the picked data fields. */
export function activityLineOf(event: RecordedEvent): { level: 'debug' | 'info' | 'warn'; fields: Fields } {
  const described = DESCRIBED[event.type];
  const category = categoryOf(event.streamId);
  const id = event.streamId.slice(category.length + 1);
  const picked = described?.fields?.(obj(event.data)) ?? {};
  // An event of no tenant (a checkpoint, the whole log's) keeps an empty organization and a placeholder
  // environment in its metadata: its line names neither.
  const { organizationId, environment } = event.metadata;
  const fields: Fields = {
    event: activityNameOf(event),
    ...(organizationId === '' ? {} : { organizationId, environment }),
    [ID_FIELD[category] ?? 'recordId']: id,
    actor: event.metadata.actor,
    position: String(event.position),
  };
  for (const [key, value] of Object.entries(picked)) if (value !== undefined && value !== null) fields[key] = value;
  return { level: QUIET_CATEGORIES.has(category) ? 'debug' : (described?.level ?? 'info'), fields };
}

/** Follows the log from its head at `start` (what was recorded before was logged by the process that recorded it). */
export function createActivityLog(deps: { eventStore: EventStore; logger: Logger }): ActivityLog {
  const { eventStore } = deps;
  const logger = deps.logger.child({ component: 'activity' });
  let after: bigint | null = null;
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;
  let unsubscribe: (() => void) | null = null;

  async function drain(): Promise<void> {
    for (;;) {
      const events = await eventStore.readAll(after, BATCH);
      for (const event of events) {
        after = event.position;
        const { level, fields } = activityLineOf(event);
        logger[level](fields, String(fields.event));
      }
      if (events.length < BATCH || stopped) return;
    }
  }

  function pump(): void {
    if (stopped) return;
    if (running !== null) {
      again = true;
      return;
    }
    running = (async () => {
      do {
        again = false;
        try {
          await drain();
        } catch (error) {
          // The next append tries again; the log itself is not lost.
          logger.warn({ err: (error as Error).message }, 'could not read the event log');
          return;
        }
      } while (again && !stopped);
    })().finally(() => {
      running = null;
    });
  }

  return {
    async start() {
      after = await eventStore.headPosition();
      unsubscribe = eventStore.onAppended(pump);
    },
    async stop() {
      unsubscribe?.();
      // What was recorded up to now is logged before the stores close.
      pump();
      stopped = true;
      await running;
    },
  };
}
