import test from 'ava';
import {
  created,
  FINALIZED_AT,
  finalized,
  INVOICE_ID,
  invoiceFixture,
  recurringInvoiceFixture,
} from '../../machines/invoice.fixture.ts';
import type { Invoice } from '../../machines/invoice.types.ts';
import { subscriptionIdOfInvoice } from '../../machines/subscription.decide.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import { invoicePayloadOf, invoiceWebhookTypeOf } from '../webhooks/invoice-webhook-events.ts';
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

test('the first invoice of a recurring series names its subscription from its finalize on, in the API as in invoice.finalized, before the subscription exists', async (t) => {
  const store = createEmbeddedReadStore({});
  const log = createTestLog(FINALIZED_AT);
  const stream = `invoice-${INVOICE_ID}`;
  const shown = async () => (await store.collection<InvoiceDoc>(INVOICES).get(INVOICE_ID))?.subscriptionId;
  await invoicesProjection.apply(log.append(stream, created(recurringInvoiceFixture())), store);
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
  await invoicesProjection.apply(log.append(stream, created(invoiceFixture())), store);
  await invoicesProjection.apply(log.append(stream, finalized()), store);
  t.is((await store.collection<InvoiceDoc>(INVOICES).get(INVOICE_ID))?.subscriptionId, null);
  t.is(invoicePayloadOf(log.events).subscriptionId, null);
});
