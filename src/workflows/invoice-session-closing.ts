import { checkoutSessionAggregate } from '../../machines/checkout-session.aggregate.ts';
import type { CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import type { InvoiceEvent } from '../../machines/invoice.types.ts';
import type { Environment, RecordedEvent } from '../event-store/event-store.ts';
import { commandFor, type Correlation, type Workflow, type WorkflowCommand } from './workflow.ts';

/** A session that leaves `open` this way can no longer be canceled, so it is no longer to close. */
export const LEAVES_OPEN: ReadonlySet<CheckoutSessionEvent['type']> = new Set<CheckoutSessionEvent['type']>([
  'CheckoutSessionPartiallyPaid',
  'CheckoutSessionCompleted',
  'CheckoutSessionExpired',
  'CheckoutSessionCanceled',
]);

/** Why the open sessions of an invoice are canceled, by the event that settled it. */
const CLOSING_REASONS: Partial<Record<InvoiceEvent['type'], string>> = {
  InvoicePaid: 'the invoice was paid through another checkout session',
  InvoiceMarkedAsPaid: 'the invoice was marked as paid',
  InvoiceVoided: 'the invoice was voided',
};

/** One invoice: its tenant, why it can no longer take a payment (null while it can), and its sessions still open. */
export type InvoiceSessionsState = {
  tenant: { organizationId: string; environment: Environment } | null;
  closedBecause: string | null;
  open: string[];
};

const INVOICE_PREFIX = 'invoice-';
const SESSION_PREFIX = 'checkout_session-';
const ACTOR = 'system:invoice-payments';

const sessionIdOf = (event: RecordedEvent): string => event.streamId.slice(SESSION_PREFIX.length);
const sameTenant = (state: InvoiceSessionsState, event: RecordedEvent): boolean =>
  state.tenant !== null &&
  state.tenant.organizationId === event.metadata.organizationId &&
  state.tenant.environment === event.metadata.environment;

function cancel(state: InvoiceSessionsState, invoiceId: string, sessionId: string, reason: string): WorkflowCommand {
  return commandFor(
    checkoutSessionAggregate,
    sessionId,
    { type: 'CancelCheckoutSession', reason },
    { ...state.tenant!, actor: ACTOR, causationId: invoiceId },
  );
}

/**
 * Invoice session closing, per invoice: once an invoice is paid (through one of its checkout
 * sessions), marked as paid or voided, each of its sessions still open is canceled with the
 * session's own cancel command (`checkout_session.canceled` and `payment_intent.canceled` follow),
 * so it can no longer be paid a second time; a session opened for an invoice already settled (a
 * pay page that raced a void or a payment) is canceled at once. Money that still reaches a
 * canceled session's deposit address is recorded on the session as a late payment and changes
 * nothing on the invoice. A session paid (even partly), expired or canceled before it could be
 * canceled is left as it is: its decider refuses the cancel. Only sessions of the invoice's own
 * tenant are its sessions.
 */
export const invoiceSessionClosing: Workflow<InvoiceSessionsState, WorkflowCommand> = {
  name: 'invoice-session-closing',
  version: 1,
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
    return LEAVES_OPEN.has(typed.type) ? null : false;
  },
  initialState: () => ({ tenant: null, closedBecause: null, open: [] }),
  evolve(state, event) {
    const type = event.type as InvoiceEvent['type'] | CheckoutSessionEvent['type'];
    if (type === 'InvoiceCreated')
      return {
        ...state,
        tenant: { organizationId: event.metadata.organizationId, environment: event.metadata.environment },
      };
    const reason = CLOSING_REASONS[type as InvoiceEvent['type']];
    if (reason !== undefined) return state.closedBecause === null ? { ...state, closedBecause: reason } : state;
    const sessionId = sessionIdOf(event);
    if (type === 'CheckoutSessionCreated')
      return sameTenant(state, event) && !state.open.includes(sessionId)
        ? { ...state, open: [...state.open, sessionId] }
        : state;
    if (LEAVES_OPEN.has(type as CheckoutSessionEvent['type']))
      return { ...state, open: state.open.filter((id) => id !== sessionId) };
    return state;
  },
  decide(event, state) {
    const type = event.type as InvoiceEvent['type'] | CheckoutSessionEvent['type'];
    const reason = CLOSING_REASONS[type as InvoiceEvent['type']];
    const invoiceId =
      reason !== undefined
        ? event.streamId.slice(INVOICE_PREFIX.length)
        : ((event.data as { session?: { invoiceId?: string | null } }).session?.invoiceId ?? null);
    if (reason !== undefined) {
      if (state.closedBecause !== null || state.tenant === null) return [];
      return state.open.map((sessionId) => cancel(state, invoiceId!, sessionId, reason));
    }
    if (type !== 'CheckoutSessionCreated' || state.closedBecause === null || invoiceId === null) return [];
    const sessionId = sessionIdOf(event);
    if (!sameTenant(state, event) || state.open.includes(sessionId)) return [];
    return [cancel(state, invoiceId, sessionId, state.closedBecause)];
  },
};
