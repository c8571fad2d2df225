import test from 'ava';
import { created as createdSession, detected, sessionFixture } from '../../machines/checkout-session.fixture.ts';
import type { CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import {
  attemptStarted,
  created as createdInvoice,
  FINALIZED_AT,
  finalized,
  INVOICE_ID,
  invoiceFixture,
  paid,
  partlyPaid,
  receivedAfterPaid,
  recurringInvoiceFixture,
} from '../../machines/invoice.fixture.ts';
import { evolveInvoice } from '../../machines/invoice.evolve.ts';
import type { Invoice, InvoiceEvent } from '../../machines/invoice.types.ts';
import { subscriptionIdOfInvoice } from '../../machines/subscription.decide.ts';
import { TRON_LOCAL_CHAIN_ID } from '../chain-ingest/tron/networks.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import { invoicePayloadOf, invoiceWebhookTypeOf } from '../webhooks/invoice-webhook-events.ts';
import { checkoutSessionsProjection } from './checkout-sessions.projection.ts';
import { INVOICES, type InvoiceDoc, invoicesProjection, publicInvoice } from './invoices.projection.ts';
import { recordOf } from './record-document.ts';
import { createTestLog } from './test-log.ts';

const TXID = 'ab'.repeat(32);
const paidWith = (transactionChainId?: number) =>
  invoiceFixture({
    status: 'paid',
    transactionHash: `0x${TXID}`,
    ...(transactionChainId !== undefined && { transactionChainId }),
  });

test('an invoice paid on Tron shows its transaction as the bare txID, as its checkout session does; elsewhere, or with the chain unknown, as recorded', (t) => {
  const tron = publicInvoice(paidWith(728126428));
  t.is(tron.transactionHash, TXID);
  t.false('transactionChainId' in tron, 'the chain only decides how the hash is shown');
  t.is(publicInvoice(paidWith(1)).transactionHash, `0x${TXID}`);
  t.is(publicInvoice(paidWith()).transactionHash, `0x${TXID}`, 'paid before the chain was recorded');
  t.is(publicInvoice(invoiceFixture()).transactionHash, null);
});

test('an invoice paid through two sessions (one partly paid, the other in full) shows what it received beyond its amount as amountOverpaid, net of network fees, exact; "0" when none', (t) => {
  const fold = (...events: InvoiceEvent[]) =>
    publicInvoice(events.reduce<Invoice | null>((invoice, e) => evolveInvoice(invoice, e), null)!);
  const open = [createdInvoice(), finalized(), attemptStarted('cs-a'), attemptStarted('cs-b')];
  const twice = fold(...open, partlyPaid('cs-a', '100000000'), paid('cs-b', '300000000'));
  t.like(twice, { status: 'paid', amountDue: '300000000', amountPaid: '400000000', amountRemaining: '0' });
  t.is(twice.amountOverpaid, '100000000');
  // A's part carried a fee of 0.4 on top: only what is beyond it counts, as amountPaid does.
  const feeOnPart: InvoiceEvent = {
    type: 'InvoicePartialPaymentReceived',
    data: { checkoutSessionId: 'cs-a', amountReceived: '100000000', amountGasFee: '40000000', at: FINALIZED_AT },
  };
  t.is(fold(...open, feeOnPart, paid('cs-b')).amountOverpaid, '60000000');
  t.is(fold(...open, paid('cs-b')).amountOverpaid, '0', 'paid exactly');
  t.is(fold(...open, partlyPaid('cs-a')).amountOverpaid, '0', 'paid in part');
  t.is(fold(...open, paid('cs-b', '100000000')).amountOverpaid, '0', 'completed short');
  t.is(publicInvoice(invoiceFixture()).amountOverpaid, '0', 'a draft');
  // Beyond 2^53: no digit lost.
  const big = publicInvoice(invoiceFixture({ amountDue: '9007199254740993', amountPaid: '18014398509481987' }));
  t.is(big.amountOverpaid, '9007199254740994');
});

test('the first invoice of a recurring series names its subscription from its finalize on, in the API as in invoice.finalized, before the subscription exists', async (t) => {
  const store = createEmbeddedReadStore({});
  const log = createTestLog(FINALIZED_AT);
  const stream = `invoice-${INVOICE_ID}`;
  const shown = async () => (await store.collection<InvoiceDoc>(INVOICES).get(INVOICE_ID))?.subscriptionId;
  await invoicesProjection.apply(log.append(stream, createdInvoice(recurringInvoiceFixture())), store);
  t.is(await shown(), null, 'a draft may still become a one-time invoice: it names none');
  // Only the invoice's own events: the billing workflow has not created the subscription yet.
  const finalize = log.append(stream, finalized());
  await invoicesProjection.apply(finalize, store);
  t.is(invoiceWebhookTypeOf(finalize), 'invoice.finalized');
  const webhook = invoicePayloadOf(log.events);
  t.is(webhook.subscriptionId, subscriptionIdOfInvoice(INVOICE_ID));
  t.is(await shown(), webhook.subscriptionId, 'GET /invoices/{id} names the subscription invoice.finalized names');
  t.is(
    publicInvoice(recordOf<Invoice>((await store.collection<InvoiceDoc>(INVOICES).get(INVOICE_ID))!)).subscriptionId,
    webhook.subscriptionId,
  );
});

test('a one-time invoice names no subscription once finalized', async (t) => {
  const store = createEmbeddedReadStore({});
  const log = createTestLog(FINALIZED_AT);
  const stream = `invoice-${INVOICE_ID}`;
  await invoicesProjection.apply(log.append(stream, createdInvoice(invoiceFixture())), store);
  await invoicesProjection.apply(log.append(stream, finalized()), store);
  t.is((await store.collection<InvoiceDoc>(INVOICES).get(INVOICE_ID))?.subscriptionId, null);
  t.is(invoicePayloadOf(log.events).subscriptionId, null);
});

test('an invoice paid on Tron before InvoicePaid recorded the chain takes it from its checkout session: the API shows the bare txID', async (t) => {
  const store = createEmbeddedReadStore({ writes: 'trusted' });
  const log = createTestLog('2026-01-03T00:00:00.000Z');
  const session = sessionFixture();
  const onTron = (): CheckoutSessionEvent => {
    const event = detected('t1', '300000000');
    if (event.type !== 'PaymentDetected') throw new Error('a detection');
    return {
      ...event,
      data: { payment: { ...event.data.payment, chainId: TRON_LOCAL_CHAIN_ID, transactionHash: `0x${TXID}` } },
    };
  };
  const sessionStream = `checkout_session-${session.id}`;
  for (const event of [createdSession(session), onTron()]) log.append(sessionStream, event);
  const invoiceStream = `invoice-${INVOICE_ID}`;
  const stored = paid(session.id);
  if (stored.type !== 'InvoicePaid') throw new Error('a payment');
  for (const event of [
    createdInvoice(),
    finalized(),
    attemptStarted(session.id),
    // As stored before the chain was recorded: no `chainId`.
    { ...stored, data: { ...stored.data, transactionHash: `0x${TXID}` } },
  ])
    log.append(invoiceStream, event);
  for (const event of log.events) {
    await checkoutSessionsProjection.apply(event, store);
    await invoicesProjection.apply(event, store);
  }
  const doc = await store.collection<InvoiceDoc>(INVOICES).get(INVOICE_ID);
  t.is(doc?.transactionChainId, TRON_LOCAL_CHAIN_ID);
  t.is(doc?.transactionHash, `0x${TXID}`, 'the read model keeps the log’s form');
  t.is(publicInvoice(recordOf(doc!)).transactionHash, TXID);
});

test('an invoice paid on an EVM chain before InvoicePaid recorded the chain still shows its hash as recorded', async (t) => {
  const store = createEmbeddedReadStore({ writes: 'trusted' });
  const log = createTestLog('2026-01-03T00:00:00.000Z');
  const session = sessionFixture();
  const evmHash = `0x${'1'.padStart(64, '0')}`;
  for (const event of [createdSession(session), detected('1', '300000000')])
    log.append(`checkout_session-${session.id}`, event);
  const stored = paid(session.id);
  if (stored.type !== 'InvoicePaid') throw new Error('a payment');
  for (const event of [
    createdInvoice(),
    finalized(),
    { ...stored, data: { ...stored.data, transactionHash: evmHash } },
  ])
    log.append(`invoice-${INVOICE_ID}`, event);
  for (const event of log.events) {
    await checkoutSessionsProjection.apply(event, store);
    await invoicesProjection.apply(event, store);
  }
  const doc = await store.collection<InvoiceDoc>(INVOICES).get(INVOICE_ID);
  t.is(doc?.transactionChainId, 7357);
  t.is(publicInvoice(recordOf(doc!)).transactionHash, evmHash);
});

test('the invoices read model folds money a paid invoice received through another session: amountPaid and amountOverpaid count it, the invoice still names the payment that paid it', async (t) => {
  const store = createEmbeddedReadStore({});
  const log = createTestLog(FINALIZED_AT);
  const stream = `invoice-${INVOICE_ID}`;
  for (const event of [
    createdInvoice(),
    finalized(),
    attemptStarted('cs-a'),
    attemptStarted('cs-b'),
    paid('cs-a'),
    receivedAfterPaid('cs-b', '100000000', false),
    receivedAfterPaid('cs-b', '300000000'),
  ])
    await invoicesProjection.apply(log.append(stream, event), store);
  const doc = (await store.collection<InvoiceDoc>(INVOICES).get(INVOICE_ID))!;
  const shown = publicInvoice(recordOf<Invoice>(doc));
  t.like(shown, {
    status: 'paid',
    amountPaid: '600000000',
    amountRemaining: '0',
    amountOverpaid: '300000000',
    checkoutSessionId: 'cs-a',
    transactionHash: `0x${'a'.repeat(64)}`,
  });
  t.like(shown.paymentAttempts[1], { checkoutSessionId: 'cs-b', status: 'succeeded', amountReceived: '300000000' });
});
