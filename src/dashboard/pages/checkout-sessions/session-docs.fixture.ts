import {
  confirmed,
  detected,
  paymentFixture,
  sessionAfterEvents,
} from '../../../../machines/checkout-session.fixture.ts';
import type { CheckoutSessionEvent } from '../../../../machines/checkout-session.types.ts';
import type { CheckoutSessionDoc } from '../../../projections/collections.ts';
import type { CustomerDoc } from '../../../projections/customers.projection.ts';

/** The machines' 3 USDC session after `events`, as the read store holds it (for the views' tests). */
export function sessionAfter(...events: CheckoutSessionEvent[]): CheckoutSessionDoc {
  const session = sessionAfterEvents(...events);
  return { ...session, _id: session.id };
}

const AT = '2026-01-01T00:12:00.000Z';

/** The payer chose USDC on the page, asked for the whole 3 USDC (6 decimals). */
export const CHOSE_USDC: CheckoutSessionEvent = {
  type: 'PaymentMethodSelected',
  data: { addressId: 'addr-usdc', amountDue: '3000000', amountGasFee: '0', at: '2026-01-01T00:05:00.000Z' },
};

/** 1 of its 3 USDC received and final: the session is incomplete, waiting for the rest. */
export const PARTLY_PAID: CheckoutSessionEvent[] = [
  detected('t1', '100000000'),
  confirmed('t1'),
  { type: 'CheckoutSessionPartiallyPaid', data: { amountReceived: '100000000', at: AT } },
];

/** The session completed by the merchant with the 1 USDC received. */
export const COMPLETED_SHORT: CheckoutSessionEvent[] = [
  ...PARTLY_PAID,
  {
    type: 'CheckoutSessionCompleted',
    data: { amountReceived: '100000000', amountOverpaid: '0', transactionHash: null, partial: true, at: AT },
  },
];

/** The 3 USDC paid in one transfer. */
export const PAID_IN_FULL: CheckoutSessionEvent[] = [
  detected('t1', '300000000'),
  confirmed('t1'),
  {
    type: 'CheckoutSessionCompleted',
    data: { amountReceived: '300000000', amountOverpaid: '0', transactionHash: null, partial: false, at: AT },
  },
];

/** A customer of the fixture's tenant. */
export const customerDoc = (id: string, fields: Partial<CustomerDoc> = {}): CustomerDoc => {
  const session = sessionAfter();
  return {
    _id: id,
    id,
    organizationId: session.organizationId,
    environment: session.environment,
    email: 'ada@example.com',
    emailLower: 'ada@example.com',
    name: 'Ada Lovelace',
    phone: null,
    organizationName: null,
    customerReferenceId: null,
    address: null,
    metadata: {},
    visibility: 10,
    createdAt: session.createdAt,
    updatedAt: session.createdAt,
    deleted: false,
    deletedAt: null,
    ...fields,
  };
};

/** 3 USDC confirmed after the session closed (`closing`): a late payment, from 0xbeef. */
const paidLate = (closing: CheckoutSessionEvent): CheckoutSessionEvent[] => [
  closing,
  detected('t9', '300000000', '2026-01-01T01:05:00.000Z'),
  confirmed('t9', '2026-01-01T01:06:00.000Z'),
  { type: 'LatePaymentReceived', data: { transferId: 't9', amount: '300000000', at: '2026-01-01T01:06:00.000Z' } },
];

/** The session expired unpaid, then its 3 USDC arrived. */
export const PAID_AFTER_EXPIRY = paidLate({ type: 'CheckoutSessionExpired', data: { at: '2026-01-01T01:00:00.000Z' } });

/** The merchant canceled the session, then its 3 USDC arrived. */
export const PAID_AFTER_CANCEL = paidLate({
  type: 'CheckoutSessionCanceled',
  data: { at: '2026-01-01T00:30:00.000Z', reason: null },
});

/** The merchant refunded the payer from its own wallet and recorded it. */
export const MARKED_REFUNDED: CheckoutSessionEvent = {
  type: 'PaymentMarkedRefunded',
  data: { comment: 'sent back in 0xabc', at: '2026-01-02T09:00:00.000Z' },
};

/** 2 USDC more confirmed a day after MARKED_REFUNDED, from another transfer: the mark does not cover it. */
export const PAID_LATE_AFTER_MARK: CheckoutSessionEvent[] = [
  detected('t20', '200000000', '2026-01-03T10:00:00.000Z'),
  confirmed('t20', '2026-01-03T10:01:00.000Z'),
  { type: 'LatePaymentReceived', data: { transferId: 't20', amount: '200000000', at: '2026-01-03T10:01:00.000Z' } },
];

/** The merchant canceled the session at 00:20 while its 3 USDC, seen at 00:10, was confirming. */
export const CANCELED_WHILE_CONFIRMING: CheckoutSessionEvent[] = [
  detected('t1', '300000000', '2026-01-01T00:10:00.000Z'),
  { type: 'CheckoutSessionCanceled', data: { at: '2026-01-01T00:20:00.000Z', reason: null } },
];

/** CANCELED_WHILE_CONFIRMING, then final at 00:25: late money, though sent before the cancel. */
export const CONFIRMED_AFTER_CANCEL: CheckoutSessionEvent[] = [
  ...CANCELED_WHILE_CONFIRMING,
  confirmed('t1', '2026-01-01T00:25:00.000Z'),
  { type: 'LatePaymentReceived', data: { transferId: 't1', amount: '300000000', at: '2026-01-01T00:25:00.000Z' } },
];

/** 1 USDC more, sent after the cancel (00:40) and final at 00:41. */
export const PAID_AFTER_THE_CANCEL_TOO: CheckoutSessionEvent[] = [
  detected('t2', '100000000', '2026-01-01T00:40:00.000Z'),
  confirmed('t2', '2026-01-01T00:41:00.000Z'),
  { type: 'LatePaymentReceived', data: { transferId: 't2', amount: '100000000', at: '2026-01-01T00:41:00.000Z' } },
];

/** The session canceled at 00:30, then 1 wei of an 18-decimal USDC confirmed late at 00:41: 0 at the 10^8 scale. */
export const DUST_AFTER_CANCEL: CheckoutSessionEvent[] = [
  { type: 'CheckoutSessionCanceled', data: { at: '2026-01-01T00:30:00.000Z', reason: null } },
  {
    type: 'PaymentDetected',
    data: {
      payment: {
        ...paymentFixture('t13', '0'),
        asset: { ...paymentFixture('t13', '0').asset, decimals: 18 },
        amountRaw: '1',
        status: 'pending',
        detectedAt: '2026-01-01T00:40:00.000Z',
        confirmedAt: null,
        late: false,
      },
    },
  },
  confirmed('t13', '2026-01-01T00:41:00.000Z'),
  { type: 'LatePaymentReceived', data: { transferId: 't13', amount: '0', at: '2026-01-01T00:41:00.000Z' } },
];
