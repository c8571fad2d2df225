import test from 'ava';
import { createManualClock } from '../../src/shared/clock.ts';
import { invoicePayments } from '../../src/workflows/invoice-payments.ts';
import { invoiceSessionClosing } from '../../src/workflows/invoice-session-closing.ts';
import { createMerchant, startTestWeir } from '../support/weir-harness.ts';
import { createCustomer, getSession, payInFull, payPart, workflowSettled } from './helpers.ts';

/**
 * An invoice paid through two of its checkout sessions (the payer opened its pay link twice, paid
 * part through the first, then all through the second) received more than its amount: the API
 * says by how much, and the payer's invoice page shows it, so the merchant knows what to refund.
 */

type InvoiceView = { id: string; status: string; amountPaid: string; amountRemaining: string; amountOverpaid: string };

test('an invoice paid through two sessions shows amountOverpaid: what it received beyond its amount; one paid once shows "0"', async (t) => {
  const clock = createManualClock(Date.parse('2026-03-01T00:00:00.000Z'));
  const weir = await startTestWeir(t, {}, { clock });
  const { api } = await createMerchant(weir.url);
  const lineItems = {
    data: [{ priceData: { currency: 'usdc', unitAmount: '300000000', productData: { name: 'Audit' } }, quantity: 1 }],
  };
  const openInvoice = async (): Promise<string> => {
    const draft = (
      await api.post<InvoiceView>('/api/v1/invoices', { customerId: await createCustomer(api), lineItems })
    ).body;
    await api.post(`/api/v1/invoices/${draft.id}/finalize`);
    return draft.id;
  };
  const openPayPage = async (invoiceId: string): Promise<string> => {
    const page = await fetch(`${weir.url}/invoices/${invoiceId}/pay`, { redirect: 'manual' });
    if (page.status !== 302) throw new Error(`the pay page answered ${page.status}`);
    return page.headers.get('location')!.split('/').pop()!;
  };
  const getInvoice = async (id: string) => (await api.get<InvoiceView>(`/api/v1/invoices/${id}`)).body;

  const invoiceId = await openInvoice();
  const a = await openPayPage(invoiceId);
  // The first session's last ten minutes: the pay link opens another.
  clock.advanceBy(55 * 60 * 1000);
  const b = await openPayPage(invoiceId);
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

  const once = await openInvoice();
  await payInFull(weir, api, await getSession(api, await openPayPage(once)));
  await workflowSettled(weir, invoicePayments.name);
  t.like(await getInvoice(once), { status: 'paid', amountPaid: '300000000', amountOverpaid: '0' });
  t.notRegex(await (await fetch(`${weir.url}/invoices/${once}`)).text(), /Overpaid/);
});
