import test from 'ava';
import type { InvoicePaymentAttempt } from '../../machines/invoice.types.ts';
import { Overpayment } from '../../src/dashboard/pages/invoices/views.tsx';
import type { ReadDocument, ReadStore } from '../../src/read-store/read-store.ts';
import { createManualClock } from '../../src/shared/clock.ts';
import { invoicePayments } from '../../src/workflows/invoice-payments.ts';
import { invoiceSessionClosing } from '../../src/workflows/invoice-session-closing.ts';
import { WORKFLOW_VERSIONS } from '../../src/workflows/workflow-runner.ts';
import { createMerchant, startTestWeir } from '../support/weir-harness.ts';
import { getSession, openInvoice, openPayPage, payInFull, payPart, workflowSettled } from './helpers.ts';

/**
 * An invoice paid through two of its checkout sessions (the payer opened its pay link twice, paid
 * part through the first, then all through the second; or all through the first, then through the
 * second after the invoice was paid) received more than its amount: the API says by how much, and
 * the payer's invoice page shows it, so the merchant knows what to refund.
 */

type InvoiceView = {
  id: string;
  status: string;
  amountDue: string;
  amountPaid: string;
  amountRemaining: string;
  amountOverpaid: string;
  currency: string;
  checkoutSessionId: string | null;
  paymentAttempts: InvoicePaymentAttempt[];
};

/**
 * A read store on which the invoice session closing workflow can be held: while held, each of its
 * passes waits at its start (it reads its version there), before reading the log, so an invoice
 * settled meanwhile does not close its other sessions yet: as when that workflow lags (its owner
 * died, the host is loaded) and a second session of the invoice is paid in that time.
 */
function holdableClosing() {
  let held: Promise<void> | null = null;
  let release = () => {};
  return {
    wrap: (store: ReadStore): ReadStore => ({
      ...store,
      collection<T extends ReadDocument>(name: string) {
        const collection = store.collection<T>(name);
        if (name !== WORKFLOW_VERSIONS) return collection;
        return {
          ...collection,
          get: async (id: string) => {
            while (id === invoiceSessionClosing.name && held !== null) await held;
            return collection.get(id);
          },
        };
      },
    }),
    hold() {
      held ??= new Promise<void>((resolve) => {
        release = () => {
          held = null;
          resolve();
        };
      });
    },
    release: () => release(),
  };
}

test('an invoice paid through two sessions shows amountOverpaid: what it received beyond its amount; one paid once shows "0"', async (t) => {
  const clock = createManualClock(Date.parse('2026-03-01T00:00:00.000Z'));
  const weir = await startTestWeir(t, {}, { clock });
  const { api } = await createMerchant(weir.url);
  const getInvoice = async (id: string) => (await api.get<InvoiceView>(`/api/v1/invoices/${id}`)).body;

  const invoiceId = await openInvoice(api);
  const a = await openPayPage(weir, invoiceId);
  // The first session's last ten minutes: the pay link opens another.
  clock.advanceBy(55 * 60 * 1000);
  const b = await openPayPage(weir, invoiceId);
  t.not(a, b);
  await payPart(weir, api, a);
  await workflowSettled(weir, invoicePayments.name);
  t.like(await getInvoice(invoiceId), { status: 'open', amountPaid: '100000000', amountOverpaid: '0' });
  await payInFull(weir, api, await getSession(api, b));
  await workflowSettled(weir, invoiceSessionClosing.name);
  await workflowSettled(weir, invoicePayments.name);

  t.like(await getInvoice(invoiceId), {
    status: 'paid',
    amountPaid: '400000000',
    amountRemaining: '0',
    amountOverpaid: '100000000',
  });
  const page = await (await fetch(`${weir.url}/invoices/${invoiceId}`)).text();
  t.regex(page, /<th scope="row">Overpaid<\/th><td id="amount-overpaid">1\.00 USDC<\/td>/);

  const once = await openInvoice(api);
  await payInFull(weir, api, await getSession(api, await openPayPage(weir, once)));
  await workflowSettled(weir, invoicePayments.name);
  t.like(await getInvoice(once), { status: 'paid', amountPaid: '300000000', amountOverpaid: '0' });
  t.notRegex(await (await fetch(`${weir.url}/invoices/${once}`)).text(), /Overpaid/);
});

test('an invoice paid through one session, then through its other session (the payer paid twice, part and rest or all at once), counts both: amountPaid twice its amount, amountOverpaid its amount, both sessions named for the refund', async (t) => {
  const clock = createManualClock(Date.parse('2026-03-01T00:00:00.000Z'));
  const closing = holdableClosing();
  const weir = await startTestWeir(t, {}, { clock, wrapReadStore: closing.wrap });
  const { api } = await createMerchant(weir.url);
  const getInvoice = async (id: string) => (await api.get<InvoiceView>(`/api/v1/invoices/${id}`)).body;
  /** The pay link opened twice: its session, then another in the first one's last ten minutes. */
  const twoSessions = async (invoiceId: string) => {
    const a = await openPayPage(weir, invoiceId);
    clock.advanceBy(55 * 60 * 1000);
    const b = await openPayPage(weir, invoiceId);
    t.not(a, b);
    return { a, b };
  };
  /** Session `a` pays the invoice in full while the closing of its other sessions lags. */
  const paidThrough = async (invoiceId: string, a: string) => {
    await workflowSettled(weir, invoiceSessionClosing.name);
    closing.hold();
    await payInFull(weir, api, await getSession(api, a));
    await workflowSettled(weir, invoicePayments.name);
    t.like(await getInvoice(invoiceId), { status: 'paid', amountPaid: '300000000', amountOverpaid: '0' });
  };
  const settle = async () => {
    closing.release();
    await workflowSettled(weir, invoiceSessionClosing.name);
    await workflowSettled(weir, invoicePayments.name);
  };

  // All at once: B pays in full after A paid.
  const whole = await openInvoice(api);
  const first = await twoSessions(whole);
  await paidThrough(whole, first.a);
  await payInFull(weir, api, await getSession(api, first.b));
  await settle();
  const twice = await getInvoice(whole);
  t.like(twice, {
    status: 'paid',
    amountDue: '300000000',
    amountPaid: '600000000',
    amountRemaining: '0',
    amountOverpaid: '300000000',
    checkoutSessionId: first.a,
  });
  t.deepEqual(
    twice.paymentAttempts.map((a) => [a.checkoutSessionId, a.status, a.amountReceived]),
    [
      [first.a, 'succeeded', '300000000'],
      [first.b, 'succeeded', '300000000'],
    ],
  );
  const page = await (await fetch(`${weir.url}/invoices/${whole}`)).text();
  t.regex(page, /<th scope="row">Overpaid<\/th><td id="amount-overpaid">3\.00 USDC<\/td>/);
  // The dashboard's alert names both sessions and what to refund.
  const alert = String(await Overpayment({ invoice: twice }));
  t.regex(alert, /overpaid by 3\.00 USDC/);
  t.regex(alert, /through 2 checkout sessions/);
  for (const id of [first.a, first.b]) t.true(alert.includes(`/dashboard/checkout-sessions/${id}`), id);

  // Part, then the rest: B receives a third after A paid, then the rest; each counted once.
  const parted = await openInvoice(api);
  const second = await twoSessions(parted);
  await paidThrough(parted, second.a);
  await payPart(weir, api, second.b);
  await workflowSettled(weir, invoicePayments.name);
  t.like(await getInvoice(parted), { status: 'paid', amountPaid: '400000000', amountOverpaid: '100000000' });
  await payInFull(weir, api, await getSession(api, second.b));
  await settle();
  const rest = await getInvoice(parted);
  t.like(rest, { status: 'paid', amountPaid: '600000000', amountRemaining: '0', amountOverpaid: '300000000' });
  t.like(rest.paymentAttempts[1], { checkoutSessionId: second.b, status: 'succeeded', amountReceived: '300000000' });
  t.deepEqual((await weir.eventStore.readStream(`invoice-${parted}`)).map((e) => e.type).slice(4), [
    'InvoicePaid',
    'InvoicePaymentReceivedAfterPaid',
    'InvoicePaymentReceivedAfterPaid',
  ]);
});
