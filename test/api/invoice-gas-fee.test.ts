import test from 'ava';
import type { GasFeeQuoter } from '../../src/chain-ingest/gas-fee.ts';
import { createManualClock } from '../../src/shared/clock.ts';
import { eventually } from '../support/api-client.ts';
import { recordingMailer } from '../support/recording-mailer.ts';
import { createMerchant, startTestWeir } from '../support/weir-harness.ts';
import { chainPublisher, randomHash } from '../support/chain-publisher.ts';
import { createCustomer, getSession, payInFull, payPart, reveal, type Session } from './helpers.ts';

type Invoice = {
  id: string;
  number: string;
  status: string;
  amountDue: string;
  amountPaid: string;
  amountRemaining: string;
  paymentAttempts: { checkoutSessionId: string; status: string; amountReceived: string; amountGasFee?: string }[];
};

/** Sweeping a deposit costs 0.01 of the paying asset: what a payer pays on top with `applyGasFee`. */
const GAS = 1_000_000n;
const gasFees: GasFeeQuoter = { quote: async () => ({ gas: 160_000n, amount: GAS }) };

/** A Weir whose organization passes the network fee to payers, and an invoice of 1.00 USDC finalized: its pay page's session. */
async function feeInvoice(t: Parameters<typeof startTestWeir>[0]) {
  const { mailer, sent } = recordingMailer();
  const app = await startTestWeir(
    t,
    {},
    { gasFees, mailer, clock: createManualClock(Date.parse('2026-03-01T00:00:00.000Z')) },
  );
  const { api } = await createMerchant(app.url);
  t.is((await api.put('/api/v1/organization/payment-setting', { applyGasFee: true })).status, 200);
  const customerId = await createCustomer(api);
  const lineItems = {
    data: [{ priceData: { currency: 'usdc', unitAmount: '100000000', productData: { name: 'Audit' } }, quantity: 1 }],
  };
  const invoice = (await api.post<Invoice>('/api/v1/invoices', { customerId, dueDate: '2026-03-31', lineItems })).body;
  t.is((await api.post(`/api/v1/invoices/${invoice.id}/finalize`)).status, 200);
  const pay = await fetch(`${app.url}/invoices/${invoice.id}/pay`, { redirect: 'manual' });
  const sessionId = pay.headers.get('location')!.split('/').pop()!;
  const get = async () => (await api.get<Invoice>(`/api/v1/invoices/${invoice.id}`)).body;
  return { app, api, sent, invoice, sessionId, get };
}

test('an invoice paid through its pay page with the network fee on top counts what was paid for it, not the fee: 1.00 paid of 1.00, its receipt saying so', async (t) => {
  const { app, api, sent, invoice, sessionId, get } = await feeInvoice(t);
  const session = await payInFull(app, api, (await api.get<Session>(`/api/v1/checkout/sessions/${sessionId}`)).body);
  t.like(session, { amountTotal: '101000000', amountReceived: '101000000' }, 'the session asked for and received 1.01');

  const paid = await eventually(async () => {
    const read = await get();
    return read.status === 'paid' ? read : undefined;
  }, 'the invoice to be paid');
  t.like(paid, { amountDue: '100000000', amountPaid: '100000000', amountRemaining: '0' });
  t.like(paid.paymentAttempts[0], {
    checkoutSessionId: sessionId,
    status: 'succeeded',
    amountReceived: '101000000',
    amountGasFee: '1000000',
  });
  const receipt = await eventually(async () => sent.find((m) => m.subject.startsWith('Receipt')), 'the receipt');
  t.regex(receipt.text, new RegExp(`we received 1.00 USDC for invoice ${invoice.number}`));
});

test('an invoice paid in two payments on its pay page with the network fee on top: the part counts what came less the fee, and the whole reads its amount due', async (t) => {
  const { app, api, sessionId, get } = await feeInvoice(t);
  // Half of the 1.01 asked: the fee is paid first from it, so 0.495 counts toward the invoice.
  await payPart(app, api, sessionId, 2n);
  const partly = await eventually(async () => {
    const read = await get();
    return read.amountPaid !== '0' ? read : undefined;
  }, 'the part to reach the invoice');
  t.like(partly, { status: 'open', amountPaid: '49500000', amountRemaining: '50500000' });
  t.like(partly.paymentAttempts[0], { status: 'pending', amountReceived: '50500000', amountGasFee: '1000000' });

  // The rest the page asks for completes the session, and the invoice reads exactly what it billed.
  const rest = await reveal(app, api, sessionId);
  t.is(rest.amountDueRaw, '505000', 'the page asks for the rest of the 1.01 (USDC units)');
  const chain = chainPublisher(app.bus);
  const blockHash = randomHash();
  await chain.transfer({ to: rest.address, amount: rest.amountDueRaw, blockNumber: 90_000, blockHash });
  await chain.final(90_000, blockHash);
  t.like(
    await eventually(async () => {
      const s = await getSession(api, sessionId);
      return s.status === 'complete' ? s : undefined;
    }, 'the session to complete'),
    { amountReceived: '101000000' },
  );
  const paid = await eventually(async () => {
    const read = await get();
    return read.status === 'paid' ? read : undefined;
  }, 'the invoice to be paid');
  t.like(paid, { amountDue: '100000000', amountPaid: '100000000', amountRemaining: '0' });
});
