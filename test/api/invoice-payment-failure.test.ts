import test from 'ava';
import { createManualClock } from '../../src/shared/clock.ts';
import { createEmbeddedReadStore } from '../../src/read-store/embedded-read-store.ts';
import { invoicesProjection, INVOICES, type InvoiceDoc } from '../../src/projections/invoices.projection.ts';
import type { RecordedEvent } from '../../src/event-store/event-store.ts';
import { attemptStarted, created, finalized, INVOICE_ID, paid } from '../../machines/invoice.fixture.ts';
import { eventually } from '../support/api-client.ts';
import { startInvoiceTestApp } from '../support/invoice-test-app.ts';
import { createMerchant } from '../support/weir-harness.ts';
import { createCustomer } from './helpers.ts';

test('an expired invoice checkout session records a failed attempt; the invoice stays open and payable', async (t) => {
  const clock = createManualClock(Date.now());
  const app = await startInvoiceTestApp(t, { clock });
  const { api } = await createMerchant(app.url);
  const invoice = (
    await api.post<{ id: string }>('/api/v1/invoices', {
      customerId: await createCustomer(api),
      lineItems: {
        data: [
          { priceData: { currency: 'usdc', unitAmount: '100000000', productData: { name: 'Setup' } }, quantity: 1 },
        ],
      },
    })
  ).body;
  await api.post(`/api/v1/invoices/${invoice.id}/finalize`);
  const first = (await fetch(`${app.url}/invoices/${invoice.id}/pay`, { redirect: 'manual' })).headers
    .get('location')!
    .split('/')
    .pop()!;

  clock.advanceBy(2 * 60 * 60 * 1000);
  type View = {
    status: string;
    paymentAttempts: { checkoutSessionId: string; status: string; failureReason: string | null }[];
  };
  const failed = await eventually(async () => {
    const view = (await api.get<View>(`/api/v1/invoices/${invoice.id}`)).body;
    return view.paymentAttempts[0]?.status === 'failed' ? view : undefined;
  }, 'the attempt to fail');
  t.is(failed.status, 'open');
  t.regex(failed.paymentAttempts[0]!.failureReason!, /expired/);
  t.is(failed.paymentAttempts[0]!.checkoutSessionId, first);

  // The pay link now opens a fresh session.
  const second = (await fetch(`${app.url}/invoices/${invoice.id}/pay`, { redirect: 'manual' })).headers
    .get('location')!
    .split('/')
    .pop()!;
  t.not(second, first);
});

test('the invoices projection is idempotent: re-applying events leaves the same document', async (t) => {
  const store = createEmbeddedReadStore({});
  const events = [created(), finalized(), attemptStarted('cs-1'), paid('cs-1')].map(
    (e, i): RecordedEvent =>
      ({
        id: `e${i}`,
        streamId: `invoice-${INVOICE_ID}`,
        revision: i,
        position: BigInt(i + 1),
        type: e.type,
        data: e.data as never,
        metadata: {
          organizationId: 'org-1',
          environment: 'test',
          actor: 'test',
          correlationId: 'c',
          causationId: null,
          occurredAt: '2026-01-01T00:00:00.000Z',
        },
      }) as unknown as RecordedEvent,
  );
  for (const event of events) await invoicesProjection.apply(event, store);
  const once = await store.collection<InvoiceDoc>(INVOICES).get(INVOICE_ID);
  for (const event of events.slice(2)) await invoicesProjection.apply(event, store);
  t.is(once!.status, 'paid');
  t.deepEqual(await store.collection<InvoiceDoc>(INVOICES).get(INVOICE_ID), once);
});
