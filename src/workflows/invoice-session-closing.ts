import { checkoutSessionAggregate } from '../../machines/checkout-session.aggregate.ts';
import type { CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import type { InvoiceEvent } from '../../machines/invoice.types.ts';
import type { Environment, RecordedEvent } from '../event-store/event-store.ts';
import { commandFor, type Correlation, type Workflow, type WorkflowCommand } from './workflow.ts';

/** A session that ends this way can no longer be closed, so it is no longer to close. */
export const ENDS: ReadonlySet<CheckoutSessionEvent['type']> = new Set<CheckoutSessionEvent['type']>([
  'CheckoutSessionCompleted',
  'CheckoutSessionExpired',
  'CheckoutSessionCanceled',
]);
/** A session that received part of its amount: it cannot be canceled (its money stays accounted for), it is completed as is. */
const PARTIAL = 'CheckoutSessionPartiallyPaid';

/** Why the open sessions of an invoice are canceled, by the event that settled it. */
const CLOSING_REASONS: Partial<Record<InvoiceEvent['type'], string>> = {
  InvoicePaid: 'the invoice was paid through another checkout session',
  InvoiceMarkedAsPaid: 'the invoice was marked as paid',
  InvoiceVoided: 'the invoice was voided',
};

/**
 * One invoice: its id and tenant (null until created), why it can no longer take a payment (null
 * while it can), its sessions still open (nothing received), and those partly paid (waiting for the rest).
 */
export type InvoiceSessionsState = {
  invoiceId: string | null;
  tenant: { organizationId: string; environment: Environment } | null;
  closedBecause: string | null;
  open: string[];
  partlyPaid: string[];
};

const INVOICE_PREFIX = 'invoice-';
const SESSION_PREFIX = 'checkout_session-';
const ACTOR = 'system:invoice-payments';

const sessionIdOf = (event: RecordedEvent): string => event.streamId.slice(SESSION_PREFIX.length);
const sameTenant = (state: InvoiceSessionsState, event: RecordedEvent): boolean =>
  state.tenant !== null &&
  state.tenant.organizationId === event.metadata.organizationId &&
  state.tenant.environment === event.metadata.environment;

function cancel(state: InvoiceSessionsState, sessionId: string, reason: string): WorkflowCommand {
  return commandFor(
    checkoutSessionAggregate,
    sessionId,
    { type: 'CancelCheckoutSession', reason },
    { ...state.tenant!, actor: ACTOR, causationId: state.invoiceId! },
  );
}

/** A partly paid session completed with what it received, as the merchant's complete-partial does, saying why. */
function complete(state: InvoiceSessionsState, sessionId: string, reason: string): WorkflowCommand {
  return commandFor(
    checkoutSessionAggregate,
    sessionId,
    { type: 'CompletePartialCheckoutSession', reason },
    { ...state.tenant!, actor: ACTOR, causationId: state.invoiceId! },
  );
}

/**
 * Invoice session closing, per invoice: once an invoice is paid (through one of its checkout
 * sessions), marked as paid or voided, each of its sessions still open is canceled with the
 * session's own cancel command (`checkout_session.canceled` and `payment_intent.canceled` follow),
 * so it can no longer be paid a second time; a session opened for an invoice already settled (a
 * pay page that raced a void or a payment) is canceled at once. One whose payment is seen and not
 * yet final is canceled too, losing nothing: money that still reaches a canceled session's deposit
 * address is recorded on the session as a late payment, which a paid invoice counts as paid twice
 * (see the invoice payments workflow) and a void one leaves on the session, as it would a payment
 * had the session completed. A session partly paid cannot be canceled (its money stays accounted
 * for) and never expires: it is completed with what it received (`CompletePartialCheckoutSession`,
 * naming the reason; `checkout_session.completed` and `payment_intent.succeeded` follow), so its
 * page no longer asks for the rest and money sent after is late; one partly paid after the invoice
 * was settled (its cancel lost the race) is completed then. The invoice records nothing more: the
 * part was counted when it came, so its decider answers nothing for that completion (a paid invoice
 * counts only money beyond what a session had, a void one none). A session paid, expired or canceled before it could be closed is left as it is: its
 * decider refuses the command. Only sessions of the invoice's own tenant are its sessions.
 */
export const invoiceSessionClosing: Workflow<InvoiceSessionsState, WorkflowCommand> = {
  name: 'invoice-session-closing',
  // 2: a partly paid session is completed as is (folded again from the log, so one left partly paid
  // on an invoice settled before is completed too; a repeat is refused by its decider).
  version: 2,
  categories: ['invoice', 'checkout_session'],
  aggregates: [checkoutSessionAggregate],
  correlate(event): Correlation {
    if (event.streamId.startsWith(INVOICE_PREFIX)) {
      const type = event.type as InvoiceEvent['type'];
      return type === 'InvoiceCreated' || CLOSING_REASONS[type] !== undefined
        ? event.streamId.slice(INVOICE_PREFIX.length)
        : false;
    }
    const typed = event as unknown as CheckoutSessionEvent;
    if (typed.type === 'CheckoutSessionCreated') return typed.data.session.invoiceId ?? false;
    return ENDS.has(typed.type) || typed.type === PARTIAL ? null : false;
  },
  initialState: () => ({ invoiceId: null, tenant: null, closedBecause: null, open: [], partlyPaid: [] }),
  evolve(state, event) {
    const type = event.type as InvoiceEvent['type'] | CheckoutSessionEvent['type'];
    if (type === 'InvoiceCreated')
      return {
        ...state,
        invoiceId: event.streamId.slice(INVOICE_PREFIX.length),
        tenant: { organizationId: event.metadata.organizationId, environment: event.metadata.environment },
      };
    const reason = CLOSING_REASONS[type as InvoiceEvent['type']];
    if (reason !== undefined) return state.closedBecause === null ? { ...state, closedBecause: reason } : state;
    const sessionId = sessionIdOf(event);
    if (type === 'CheckoutSessionCreated')
      return sameTenant(state, event) && !state.open.includes(sessionId)
        ? { ...state, open: [...state.open, sessionId] }
        : state;
    if (type === PARTIAL)
      return state.open.includes(sessionId)
        ? { ...state, open: state.open.filter((id) => id !== sessionId), partlyPaid: [...state.partlyPaid, sessionId] }
        : state;
    if (ENDS.has(type as CheckoutSessionEvent['type']))
      return {
        ...state,
        open: state.open.filter((id) => id !== sessionId),
        partlyPaid: state.partlyPaid.filter((id) => id !== sessionId),
      };
    return state;
  },
  decide(event, state) {
    const type = event.type as InvoiceEvent['type'] | CheckoutSessionEvent['type'];
    const reason = CLOSING_REASONS[type as InvoiceEvent['type']];
    if (reason !== undefined) {
      if (state.closedBecause !== null || state.tenant === null) return [];
      return [
        ...state.open.map((sessionId) => cancel(state, sessionId, reason)),
        ...state.partlyPaid.map((sessionId) => complete(state, sessionId, reason)),
      ];
    }
    if (state.closedBecause === null || state.tenant === null) return [];
    const sessionId = sessionIdOf(event);
    // Its first part came after the invoice was settled: the cancel it was sent (if it ran first) was refused.
    if (type === PARTIAL)
      return state.open.includes(sessionId) ? [complete(state, sessionId, state.closedBecause)] : [];
    if (type !== 'CheckoutSessionCreated' || !sameTenant(state, event) || state.open.includes(sessionId)) return [];
    return [cancel(state, sessionId, state.closedBecause)];
  },
};
