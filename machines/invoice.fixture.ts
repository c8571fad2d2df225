import type { Invoice, InvoiceEvent } from './invoice.types.ts';

export const INVOICE_ID = '22222222-2222-4222-8222-222222222222';
export const CREATED_AT = '2026-01-01T00:00:00.000Z';
export const FINALIZED_AT = '2026-01-02T00:00:00.000Z';
export const DUE_DATE = '2026-02-01T00:00:00.000Z';
export const HOSTED_URL = `http://127.0.0.1/invoice/${INVOICE_ID}`;

/** A one-time draft of 2 × 1.5 USDC (3 USDC) for customer `cus-1`, due 2026-02-01, created 2026-01-01. */
export function invoiceFixture(overrides: Partial<Invoice> = {}): Invoice {
  return {
    id: INVOICE_ID,
    organizationId: 'org-1',
    environment: 'test',
    createdAt: CREATED_AT,
    updatedAt: CREATED_AT,
    number: 'INV-0001',
    customerId: 'cus-1',
    description: null,
    currency: 'usdc',
    lineItems: {
      object: 'list',
      data: [
        {
          description: 'Consulting hour',
          priceId: null,
          quantity: 2,
          unitAmount: '150000000',
          amountTotal: '300000000',
        },
      ],
    },
    amountDue: '300000000',
    amountPaid: '0',
    amountRemaining: '300000000',
    dueDate: DUE_DATE,
    issueDate: null,
    memo: 'Thank you',
    footer: null,
    invoiceType: 'one_time',
    recurring: null,
    collectionMethod: 'send_invoice',
    billingReason: 'manual',
    paymentMethods: { chainIds: [7357], assetIds: ['weir-testnet:usdc'] },
    reminders: { enabled: true, daysBeforeDue: [3], daysAfterDue: [1, 7] },
    metadata: {},
    status: 'draft',
    url: null,
    paid: false,
    paidOutOfBand: false,
    attempted: false,
    attemptCount: 0,
    checkoutSessionId: null,
    paymentAttempts: [],
    transactionHash: null,
    remindersSent: [],
    remindersSkipped: [],
    nextInvoice: null,
    subscriptionId: null,
    finalizedAt: null,
    sentAt: null,
    paidAt: null,
    voidedAt: null,
    markedUncollectibleAt: null,
    deletedAt: null,
    ...overrides,
  };
}

/** The same draft, billed monthly (or every `intervalCount` months). */
export const recurringInvoiceFixture = (intervalCount: 1 | 3 | 6 | 12 = 1, overrides: Partial<Invoice> = {}): Invoice =>
  invoiceFixture({
    invoiceType: 'recurring',
    recurring: { interval: 'month', intervalCount },
    collectionMethod: 'charge_automatically',
    ...overrides,
  });

/** Created as Weir writes it now: its due date an instant (`dueIsInstant`). */
export const created = (invoice = invoiceFixture()): InvoiceEvent => ({
  type: 'InvoiceCreated',
  data: { invoice, dueIsInstant: true },
});
export const finalized = (at = FINALIZED_AT, issueDate = at, dueDate = invoiceFixture().dueDate): InvoiceEvent => ({
  type: 'InvoiceFinalized',
  data: { number: 'INV-0001', url: HOSTED_URL, issueDate, dueDate, at },
});
export const attemptStarted = (checkoutSessionId: string, at = '2026-01-03T00:00:00.000Z'): InvoiceEvent => ({
  type: 'InvoicePaymentAttemptStarted',
  data: { checkoutSessionId, at },
});
export const paid = (
  checkoutSessionId: string,
  amountPaid = '300000000',
  at = '2026-01-03T00:10:00.000Z',
): InvoiceEvent => ({
  type: 'InvoicePaid',
  data: { checkoutSessionId, transactionHash: `0x${'a'.repeat(64)}`, amountPaid, at },
});
/** The session `checkoutSessionId` received `amountReceived` in all so far, less than its amount. */
export const partlyPaid = (
  checkoutSessionId: string,
  amountReceived = '100000000',
  at = '2026-01-03T00:05:00.000Z',
): InvoiceEvent => ({
  type: 'InvoicePartialPaymentReceived',
  data: { checkoutSessionId, amountReceived, at },
});
/**
 * The session `checkoutSessionId` of an invoice already paid received `amountReceived` in all so far:
 * `completed` once it is paid (with its transaction), else a part of it.
 */
export const receivedAfterPaid = (
  checkoutSessionId: string,
  amountReceived = '300000000',
  completed = true,
  at = '2026-01-03T00:20:00.000Z',
): InvoiceEvent => ({
  type: 'InvoicePaymentReceivedAfterPaid',
  data: {
    checkoutSessionId,
    amountReceived,
    completed,
    transactionHash: completed ? `0x${'b'.repeat(64)}` : null,
    at,
  },
});
export const voided = (at = '2026-01-04T00:00:00.000Z'): InvoiceEvent => ({ type: 'InvoiceVoided', data: { at } });
export const markedUncollectible = (at = '2026-01-04T00:00:00.000Z'): InvoiceEvent => ({
  type: 'InvoiceMarkedUncollectible',
  data: { at },
});
export const deleted = (at = '2026-01-01T01:00:00.000Z'): InvoiceEvent => ({ type: 'InvoiceDeleted', data: { at } });
