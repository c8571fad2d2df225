import test from 'ava';
import type { SubscriptionBill } from '../../../../machines/subscription.types.ts';
import type { InvoiceDoc } from '../../../projections/invoices.projection.ts';
import { productFixture } from '../../../actors/catalog.fixture.ts';
import { PRODUCTS, type ProductDoc } from '../../../projections/catalog.projection.ts';
import { createEmbeddedReadStore } from '../../../read-store/embedded-read-store.ts';
import {
  Actions,
  BillStatus,
  MoneyToRefund,
  OpenBills,
  planOf,
  SubscriptionStatus,
  type SubscriptionView,
  withProductNames,
} from './page.tsx';

/** The renewal's bill as the subscription records it: open, due at its due date, from its issue on. */
const bill = {
  id: 'inv-1',
  checkoutSessionId: null,
  kind: 'invoice',
  amountDue: '1000000000',
  periodStart: '2026-02-01T00:00:00.000Z',
  periodEnd: '2026-03-01T00:00:00.000Z',
  issuedAt: '2026-02-01T00:00:00.000Z',
  dueAt: '2026-02-08T00:00:00.000Z',
  status: 'open',
  paidAt: null,
} as SubscriptionBill;

const invoice = (more: Partial<InvoiceDoc>): InvoiceDoc => ({ id: 'inv-1', ...more }) as unknown as InvoiceDoc;

/** The badge's text. */
const label = async (props: Parameters<typeof BillStatus>[0]): Promise<string> =>
  String(await BillStatus(props))
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();

test("a renewal Weir could not finalize reads as not finalized in the subscription's periods, not as an open bill the customer was sent", async (t) => {
  const failed = { code: 'payment_method_not_available', field: null, message: 'no wallet', at: bill.issuedAt };
  t.is(await label({ bill, invoice: invoice({ status: 'draft', lastFinalizationError: failed }) }), 'Not finalized');
  // Finalized by the merchant: the bill is open, as the subscription says.
  t.is(await label({ bill, invoice: invoice({ status: 'open' }) }), 'Open');
  t.is(await label({ bill, invoice: invoice({ status: 'void' }) }), 'Void');
  t.is(await label({ bill }), 'Open');
});

test('a subscription whose latest renewal Weir could not finalize says so by its status, in the list and on its page; its period reads not finalized', async (t) => {
  const draft = { ...bill, status: 'draft' } as SubscriptionBill;
  t.is(await label({ bill: draft }), 'Not finalized');
  type Shown = Parameters<typeof SubscriptionStatus>[0]['s'];
  const status = async (s: Record<string, unknown>): Promise<string> =>
    String(await SubscriptionStatus({ s: s as unknown as Shown }))
      .replace(/<[^>]+>/g, ' ')
      .replace(/\s+/g, ' ')
      .trim();
  const active = { status: 'active', cancelAtPeriodEnd: false } as const;
  t.is(await status({ ...active, latestInvoice: { ...bill, status: 'draft' } }), 'Active Bill not finalized');
  t.is(await status({ ...active, latestInvoice: { ...bill, status: 'open' } }), 'Active');
  t.is(await status({ ...active, status: 'canceled', latestInvoice: { ...bill, status: 'draft' } }), 'Canceled');
});

test('a subscription reads as the product(s) it sells, as Stripe shows one: one recorded without its products\' names (null) takes them from the catalog, not "Plan"', async (t) => {
  const readStore = createEmbeddedReadStore({});
  const tenant = { organizationId: 'org-1', environment: 'test' } as const;
  const products = readStore.collection<ProductDoc>(PRODUCTS);
  for (const [id, name, organizationId] of [
    ['prod-hosting', 'Hosting', 'org-1'],
    ['prod-support', 'Support', 'org-1'],
    ['prod-foreign', 'Not yours', 'org-2'],
  ] as const)
    await products.put({ ...productFixture({ id, name, organizationId }), _id: id });
  const line = (productId: string, name: string | null) => ({ price: { productId, product: { id: productId, name } } });
  const subscription = (...lines: ReturnType<typeof line>[]) =>
    ({ id: 'sub', lineItems: { object: 'list', data: lines } }) as unknown as SubscriptionView;
  const shown = async (s: SubscriptionView) => planOf((await withProductNames({ readStore }, tenant, [s]))[0]!);
  // Named when it began (a checkout's): that name, the catalog not read for it.
  t.is(await shown(subscription(line('prod-hosting', 'Hosting (2025)'))), 'Hosting (2025)');
  // A recurring invoice's, recorded without names: its products' names from the catalog.
  t.is(await shown(subscription(line('prod-hosting', null), line('prod-support', null))), 'Hosting, Support');
  // Another organization's product is never read; a line with no product at all stays "Plan".
  t.is(await shown(subscription(line('prod-foreign', null))), 'Plan');
  t.is(await shown(subscription(line('', null))), 'Plan');
});

test('"Cancel at period end" is offered only where the API takes it: not on an incomplete or paused subscription, nor one already canceling; "End now" (a link to a page that asks first) on every one that has not ended', async (t) => {
  type Props = Parameters<typeof Actions>[0];
  const ctx = { state: { csrfToken: 'csrf' } } as unknown as Props['ctx'];
  const buttons = async (status: string, cancelAtPeriodEnd = false): Promise<string[]> => {
    const s = { id: 'sub-1', status, cancelAtPeriodEnd } as unknown as Props['s'];
    return [...String(await Actions({ ctx, s })).matchAll(/<(?:button|a)[^>]*>\s*([^<]+?)\s*<\/(?:button|a)>/g)].map(
      (m) => m[1]!,
    );
  };
  for (const status of ['trialing', 'active', 'past_due', 'unpaid'])
    t.deepEqual(await buttons(status), ['Cancel at period end', 'End now'], status);
  t.deepEqual(await buttons('incomplete'), ['End now']);
  t.deepEqual(await buttons('paused'), ['Resume', 'End now']);
  t.deepEqual(await buttons('active', true), ['Resume', 'End now']);
  t.deepEqual(await buttons('canceled'), []);
});

test("a subscription's page lists every open bill from the invoices read model, not only its latest: an earlier renewal still open beside a later one; one paid since reads paid in its period", async (t) => {
  const text = async (invoices: InvoiceDoc[]) =>
    String(await OpenBills({ invoices, currency: 'usdc' }))
      .replace(/<[^>]+>/g, ' ')
      .replace(/\s+/g, ' ')
      .trim();
  const earlier = invoice({ id: 'inv-1', number: 'A-0001', status: 'open', amountRemaining: '1000000000' });
  const later = invoice({ id: 'inv-2', number: 'A-0002', status: 'open', amountRemaining: '1000000000' });
  const paid = invoice({ id: 'inv-0', number: 'A-0000', status: 'paid', amountRemaining: '0' });
  const shown = await text([later, earlier, paid]);
  t.regex(shown, /A-0002 10\.00 USDC due A-0001 10\.00 USDC due/);
  t.false(shown.includes('A-0000'));
  t.is(await text([paid]), 'None');
  // Its period, recorded open when a later renewal was issued, reads as the invoice now stands.
  t.is(await label({ bill, invoice: invoice({ status: 'paid' }) }), 'Paid');
});

test('a subscription that ended without starting whose first session kept money says plainly that it is to refund, linking the session; none when nothing is owed back or it goes on', async (t) => {
  type Shown = Parameters<typeof MoneyToRefund>[0]['s'];
  const first = { ...bill, id: null, checkoutSessionId: 'cs-1', kind: 'checkout_session', status: 'expired' };
  const shown = async (s: Record<string, unknown>): Promise<string> => String(await MoneyToRefund({ s: s as Shown }));
  const text = await shown({
    status: 'incomplete_expired',
    currency: 'usdc',
    latestInvoice: { ...first, amountToRefund: '1000000000' },
  });
  t.regex(
    text.replace(/<[^>]+>/g, ''),
    /10(\.00)? USDC reached the first payment of this subscription, which ended without starting: it did not start it\. Refund it to the payer/,
  );
  t.true(text.includes('href="/dashboard/checkout-sessions/cs-1"'));
  t.is(await shown({ status: 'incomplete_expired', currency: 'usdc', latestInvoice: first }), '');
  t.is(await shown({ status: 'active', currency: 'usdc', latestInvoice: { ...first, amountToRefund: '1' } }), '');
});
