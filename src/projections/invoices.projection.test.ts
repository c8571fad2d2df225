import test from 'ava';
import { created as createdSession, detected, sessionFixture } from '../../machines/checkout-session.fixture.ts';
import type { CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import {
  attemptStarted,
  created as createdInvoice,
  finalized,
  INVOICE_ID,
  invoiceFixture,
  paid,
} from '../../machines/invoice.fixture.ts';
import { TRON_LOCAL_CHAIN_ID } from '../chain-ingest/tron/networks.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
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
