import test from 'ava';
import type { InvoicePaymentAttempt } from '../../machines/invoice.types.ts';
import { hasLateToSettle } from '../../machines/checkout-session.late.ts';
import { withInvoicesPaidLate } from '../../src/dashboard/invoices-paid-late.ts';
import { LatePaidInvoice, MoneyToSettle } from '../../src/dashboard/pages/checkout-sessions/detail.tsx';
import { needsAction } from '../../src/dashboard/pages/home.tsx';
import { Overpayment } from '../../src/dashboard/pages/invoices/views.tsx';
import { COLLECTIONS, type CheckoutSessionDoc } from '../../src/projections/collections.ts';
import type { Weir } from '../../src/app/start-weir.ts';
import { createManualClock } from '../../src/shared/clock.ts';
import { invoicePayments } from '../../src/workflows/invoice-payments.ts';
import { invoiceSessionClosing } from '../../src/workflows/invoice-session-closing.ts';
import { apiClient, eventually } from '../support/api-client.ts';
import { chainPublisher, randomHash } from '../support/chain-publisher.ts';
import { createMerchant, startTestWeir } from '../support/weir-harness.ts';
import {
  forgetWorkflows,
  getSession,
  openInvoice,
  openPayPage,
  payInFull,
  payLate,
  payPart,
  receiveHooks,
  restartableWeir,
  reveal,
  untilCanceled,
  workflowSettled,
  type Api,
} from './helpers.ts';

/**
 * Money that reaches a checkout session of an invoice after the session expired or was canceled is
 * in the merchant's wallet all the same: the invoice counts it (a part while open, paid once it
 * covers the rest, paid twice once paid), so the payer is not asked to pay it again.
 */

type InvoiceView = {
  id: string;
  status: string;
  number: string;
  amountPaid: string;
  amountRemaining: string;
  amountOverpaid: string;
  amountDue: string;
  currency: string;
  checkoutSessionId: string | null;
  transactionHash: string | null;
  paymentAttempts: InvoicePaymentAttempt[];
};

const HOUR = 60 * 60 * 1000;
const getInvoice = async (api: Api, id: string) => (await api.get<InvoiceView>(`/api/v1/invoices/${id}`)).body;
const invoicePage = async (url: string, id: string) => (await fetch(`${url}/invoices/${id}`)).text();

/** What the payer's checkout page of session `id` says (its status line), and its status poll's words. */
async function payerPage(url: string, id: string) {
  const html = await (await fetch(`${url}/checkout/${id}`)).text();
  const field = (name: string) => new RegExp(`id="${name}">([^<]*)<`).exec(html)?.[1];
  const poll = (await (await fetch(`${url}/checkout/${id}/status`)).json()) as { title: string; detail: string };
  return {
    title: field('status-title'),
    detail: field('status-detail'),
    poll: { title: poll.title, detail: poll.detail },
  };
}

/** Session `id` as the dashboard reads it (its invoice's late money marked), Home's list, and its page's cards. */
async function dashboardOf(weir: Pick<Weir, 'readStore'>, organizationId: string, id: string) {
  const tenant = { organizationId, environment: 'test' as const };
  const doc = await weir.readStore.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions).get(id);
  const { sessions, invoices } = await withInvoicesPaidLate(weir.readStore, tenant, [doc!]);
  const session = sessions[0]!;
  const { items } = await needsAction(weir, tenant);
  return {
    toSettle: hasLateToSettle(session),
    onHome: items.some((item) => 'session' in item && item.session.id === id),
    paidLine: String(
      await LatePaidInvoice({ session, invoice: session.invoiceId ? invoices.get(session.invoiceId) : undefined }),
    ),
    card: String(await MoneyToSettle({ session, csrf: 'x', canManage: true, timeZone: 'UTC' })),
  };
}

test('an invoice whose session expired counts the money that reaches it after: a part keeps it open owing the rest (its pay link asks only that), the rest pays it with one invoice.paid; nothing more after a restart that folds the whole log again', async (t) => {
  const clock = createManualClock(Date.parse('2026-03-01T00:00:00.000Z'));
  const weir = await restartableWeir(t, clock);
  const first = await weir.start();
  const { api, testSecretKey, organizationId } = await createMerchant(first.url);
  // The invoice's webhooks name its paying session (its checkoutSessionId), as that session's own do.
  const hooks = await receiveHooks(t, api, ['invoice.paid', 'checkout_session.late_payment']);
  const invoiceId = await openInvoice(api);
  const a = await openPayPage(first, invoiceId);
  const shown = await reveal(first, api, a);

  clock.advanceBy(2 * HOUR);
  await eventually(
    async () => ((await getSession(api, a)).status === 'expired' ? true : undefined),
    'the session to expire',
  );
  await workflowSettled(first, invoicePayments.name);
  t.like((await getInvoice(api, invoiceId)).paymentAttempts[0], { checkoutSessionId: a, status: 'failed' });

  // A third arrives late: counted, the invoice stays open for the rest, and its pay link asks only that.
  const third = (BigInt(shown.amountDueRaw) / 3n).toString();
  await payLate(first, api, a, { ...shown, amountDueRaw: third });
  await workflowSettled(first, invoicePayments.name);
  const partly = await getInvoice(api, invoiceId);
  t.like(partly, { status: 'open', amountPaid: '100000000', amountRemaining: '200000000' });
  t.like(partly.paymentAttempts[0], { checkoutSessionId: a, status: 'failed', amountReceived: '100000000' });
  t.regex(await invoicePage(first.url, invoiceId), /<td id="amount-paid">1\.00 USDC<\/td>/);
  t.regex(await invoicePage(first.url, invoiceId), /<td id="amount-remaining">2\.00 USDC<\/td>/);
  // The payer's page of the expired session tells the invoice counted it, not that it will be settled.
  const counted = await payerPage(first.url, a);
  t.is(counted.title, 'Payment counted on the invoice');
  t.is(
    counted.detail,
    `Your payment of 1.00 USDC was received after this checkout was expired. Invoice ${partly.number} counts 1.00 USDC received late; 2.00 USDC is still due on it, to pay from the invoice, not to this address. Do not send anything more to this address.`,
  );
  t.deepEqual(counted.poll, { title: counted.title, detail: counted.detail });
  const b = await openPayPage(first, invoiceId);
  t.is((await getSession(api, b)).amountTotal, '200000000');
  const invoiceEvents = async (w: typeof first) =>
    (await w.eventStore.readStream(`invoice-${invoiceId}`)).map((e) => e.type);
  t.false((await invoiceEvents(first)).includes('InvoicePaid'), 'a part is no payment of it (no invoice.paid)');

  // The rest arrives late at the same address: the invoice is paid by it, and its new session canceled.
  const rest = (BigInt(shown.amountDueRaw) - BigInt(third)).toString();
  const chain = chainPublisher(first.bus);
  const blockHash = randomHash();
  await chain.transfer({ to: shown.address, amount: rest, blockNumber: 9_001, blockHash });
  await chain.final(9_001, blockHash);
  const paid = await eventually(async () => {
    const invoice = await getInvoice(api, invoiceId);
    return invoice.status === 'paid' ? invoice : undefined;
  }, 'the invoice to be paid');
  t.like(paid, { amountPaid: '300000000', amountRemaining: '0', amountOverpaid: '0', checkoutSessionId: a });
  // Paid late, the attempt succeeded: the expiry's failureReason no longer stands.
  t.like(paid.paymentAttempts[0], {
    checkoutSessionId: a,
    status: 'succeeded',
    amountReceived: '300000000',
    failureReason: null,
  });
  t.not(paid.transactionHash, null);
  await untilCanceled(api, b);
  t.regex(await invoicePage(first.url, invoiceId), /<td id="amount-paid">3\.00 USDC<\/td>/);
  // The late money paid the invoice: the session has nothing to settle, Home does not list it, its page names the invoice.
  const seen = await dashboardOf(first, organizationId, a);
  t.like(seen, { toSettle: false, onHome: false, card: '' });
  t.regex(seen.paidLine, /These late payments paid invoice <a href="\/dashboard\/invoices\/[^"]+">[^<]+<\/a>/);
  t.true(seen.paidLine.includes(`/dashboard/invoices/${invoiceId}`));
  t.true(seen.paidLine.includes(`>${paid.number}</a>`), 'named by its number');
  // The payer's page says the same: the late money paid the invoice, nothing is to be settled or refunded.
  const told = await payerPage(first.url, a);
  t.is(told.title, 'Invoice paid');
  t.is(
    told.detail,
    `Your payment of 3.00 USDC was received after this checkout was expired. Invoice ${paid.number} counts 3.00 USDC received late and is paid. Do not send anything more to this address.`,
  );
  t.deepEqual(told.poll, { title: told.title, detail: told.detail });
  await hooks.waitFor(a, ['invoice.paid']);
  await workflowSettled(first, invoiceSessionClosing.name);
  await workflowSettled(first, invoicePayments.name);
  const logged = await invoiceEvents(first);
  t.is(logged.filter((type) => type === 'InvoicePaid').length, 1);
  await first.stop();

  // Every workflow forgets what it decided (as after a version change): the whole log is folded again.
  await forgetWorkflows(weir.dataDir);
  const second = await weir.start();
  await workflowSettled(second, invoiceSessionClosing.name);
  await workflowSettled(second, invoicePayments.name);
  t.deepEqual(await invoiceEvents(second), logged, 'nothing more');
  t.like(await getInvoice(apiClient(second.url, testSecretKey), invoiceId), {
    status: 'paid',
    amountPaid: '300000000',
  });
  t.is(hooks.about(a).filter((type) => type === 'invoice.paid').length, 1, 'invoice.paid once');
});

test('a session the paid invoice canceled while its payment was seen, not yet final, is counted once that payment is final: paid twice, the overpayment shown for the refund; the canceled session holds it as late money', async (t) => {
  const clock = createManualClock(Date.parse('2026-03-01T00:00:00.000Z'));
  const weir = await startTestWeir(t, {}, { clock });
  const { api, organizationId } = await createMerchant(weir.url);
  const invoiceId = await openInvoice(api);
  const a = await openPayPage(weir, invoiceId);
  clock.advanceBy(55 * 60 * 1000);
  const b = await openPayPage(weir, invoiceId);
  t.not(a, b);

  // B's payment is seen, not yet final, when A pays the invoice: B is canceled (nothing received yet).
  const shownOnB = await reveal(weir, api, b);
  const chain = chainPublisher(weir.bus);
  const blockHash = randomHash();
  await chain.transfer({ to: shownOnB.address, amount: shownOnB.amountDueRaw, blockNumber: 9_101, blockHash });
  await eventually(
    async () => ((await getSession(api, b)).paymentIntent.status === 'processing' ? true : undefined),
    'the transfer to B to be seen',
  );
  await payInFull(weir, api, await getSession(api, a));
  await untilCanceled(api, b);
  await workflowSettled(weir, invoicePayments.name);
  t.like(await getInvoice(api, invoiceId), { status: 'paid', amountPaid: '300000000', amountOverpaid: '0' });

  await chain.final(9_101, blockHash);
  const overpaid = await eventually(async () => {
    const invoice = await getInvoice(api, invoiceId);
    return invoice.amountPaid === '600000000' ? invoice : undefined;
  }, 'the invoice to count B');
  t.like(overpaid, { status: 'paid', amountOverpaid: '300000000', checkoutSessionId: a });
  t.like(
    overpaid.paymentAttempts.find((p) => p.checkoutSessionId === b),
    { amountReceived: '300000000' },
  );
  const session = await getSession(api, b);
  t.is(session.status, 'canceled');
  t.true(session.paymentIntent.transactions[0]!.late);
  t.regex(await invoicePage(weir.url, invoiceId), /<td id="amount-overpaid">3\.00 USDC<\/td>/);
  const alert = String(await Overpayment({ invoice: overpaid }));
  t.regex(alert, /overpaid by 3\.00 USDC/);
  t.true(alert.includes(`/dashboard/checkout-sessions/${b}`));
  // Counted once the invoice was paid, it paid nothing: the payer is owed it, the session still asks to settle it.
  const seen = await dashboardOf(weir, organizationId, b);
  t.like(seen, { toSettle: true, onHome: true, paidLine: '' });
  t.regex(seen.card, /needs refund or review/);
  // Its payer is told the business will settle it, as before: it paid no invoice.
  const told = await payerPage(weir.url, b);
  t.is(told.title, 'Payment received, checkout canceled');
  t.regex(told.detail ?? '', /will settle it with you, by a refund or a credit\. Do not send/);
  t.notRegex(told.detail ?? '', /Invoice/);
  await workflowSettled(weir, invoicePayments.name);
  t.deepEqual((await weir.eventStore.readStream(`invoice-${invoiceId}`)).map((e) => e.type).slice(-2), [
    'InvoicePaid',
    'InvoicePaymentReceivedAfterPaid',
  ]);
});

test('money that reaches a session after the merchant completed it as partly paid counts on its invoice, paid by that completion: the invoice shows all it received, once', async (t) => {
  const clock = createManualClock(Date.parse('2026-03-01T00:00:00.000Z'));
  const weir = await startTestWeir(t, {}, { clock });
  const { api } = await createMerchant(weir.url);
  const invoiceId = await openInvoice(api);
  const a = await openPayPage(weir, invoiceId);
  const shown = await reveal(weir, api, a);
  await payPart(weir, api, a);
  const completed = await api.post(`/api/v1/checkout/sessions/${a}/complete-partial-checkout-session`, {});
  t.is(completed.status, 200);
  await workflowSettled(weir, invoicePayments.name);
  t.like(await getInvoice(api, invoiceId), { status: 'paid', amountPaid: '100000000' });

  // Another third arrives at the same address: late money of the session (not past its total), counted on the invoice.
  const third = (BigInt(shown.amountDueRaw) / 3n).toString();
  await payLate(weir, api, a, { ...shown, amountDueRaw: third });
  const counted = await eventually(async () => {
    const invoice = await getInvoice(api, invoiceId);
    return invoice.amountPaid === '200000000' ? invoice : undefined;
  }, 'the invoice to count the late money');
  t.like(counted, { status: 'paid', checkoutSessionId: a });
  t.like(
    counted.paymentAttempts.find((p) => p.checkoutSessionId === a),
    { status: 'succeeded', amountReceived: '200000000' },
  );
  await workflowSettled(weir, invoicePayments.name);
  const types = (await weir.eventStore.readStream(`invoice-${invoiceId}`)).map((e) => e.type);
  t.is(types.filter((type) => type === 'InvoicePaymentReceivedAfterPaid').length, 1);
});

test('money past its total a session receives once complete counts on its invoice as its overpayment (API and dashboard page), once; the overpayment its completion came with is counted once too', async (t) => {
  const clock = createManualClock(Date.parse('2026-03-01T00:00:00.000Z'));
  const weir = await startTestWeir(t, {}, { clock });
  const { api } = await createMerchant(weir.url);
  const invoiceId = await openInvoice(api);
  const a = await openPayPage(weir, invoiceId);
  const shown = await reveal(weir, api, a);
  const chain = chainPublisher(weir.bus);
  const send = async (amount: bigint, blockNumber: number) => {
    const blockHash = randomHash();
    await chain.transfer({ to: shown.address, amount: amount.toString(), blockNumber, blockHash });
    await chain.final(blockNumber, blockHash);
  };
  const overpaidBy = (amount: string) =>
    eventually(async () => {
      const session = (await api.get<{ status: string; amountOverpaid: string }>(`/api/v1/checkout/sessions/${a}`))
        .body;
      return session.status === 'complete' && session.amountOverpaid === amount ? session : undefined;
    }, `the session to be overpaid by ${amount}`);

  // 3.50 USDC for 3.00: complete past its total, the invoice paid with all of it (counted once).
  const due = BigInt(shown.amountDueRaw);
  await send(due + due / 6n, 9_201);
  await overpaidBy('50000000');
  await workflowSettled(weir, invoicePayments.name);
  t.like(await getInvoice(api, invoiceId), { status: 'paid', amountPaid: '350000000', amountOverpaid: '50000000' });

  // 1.00 USDC more once complete: the invoice counts it, its overpayment now 1.50.
  await send(due / 3n, 9_202);
  await overpaidBy('150000000');
  await workflowSettled(weir, invoicePayments.name);
  const overpaid = await getInvoice(api, invoiceId);
  t.like(overpaid, { status: 'paid', amountPaid: '450000000', amountOverpaid: '150000000', checkoutSessionId: a });
  t.like(
    overpaid.paymentAttempts.find((p) => p.checkoutSessionId === a),
    { status: 'succeeded', amountReceived: '450000000' },
  );
  t.regex(await invoicePage(weir.url, invoiceId), /<td id="amount-overpaid">1\.50 USDC<\/td>/);
  t.regex(String(await Overpayment({ invoice: overpaid })), /overpaid by 1\.50 USDC/);
  const types = (await weir.eventStore.readStream(`invoice-${invoiceId}`)).map((e) => e.type);
  t.deepEqual(types.slice(-2), ['InvoicePaid', 'InvoicePaymentReceivedAfterPaid']);
});
