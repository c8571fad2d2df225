import test from 'ava';
import { startInvoiceTestApp } from '../support/invoice-test-app.ts';
import { createMerchant } from '../support/weir-harness.ts';
import { assertError, createCustomer } from './helpers.ts';

const INVOICES = '/api/v1/invoices';
type Invoice = {
  id: string;
  status: string;
  memo: string | null;
  amountDue: string;
  lineItems: { data: { priceId: string }[] };
};

test('a draft whose price or product was deactivated since can still be edited and finalized with its lines; the price is refused on new goods', async (t) => {
  // Every update sending lineItems resolved each price again as for a new sale: once the merchant
  // deactivated a price (or its product) a draft used, any such edit (the dashboard sends its lines
  // with every save, a memo's too) was refused, and nothing in the editor could fix it.
  const app = await startInvoiceTestApp(t);
  const { api } = await createMerchant(app.url);
  const customerId = await createCustomer(api);
  const product = (
    await api.post<{ id: string; defaultPriceId: string }>('/api/v1/products', {
      name: 'Retainer',
      defaultPriceData: { currency: 'usdc', unitAmount: '250000000' },
    })
  ).body;
  const other = (
    await api.post<{ id: string; defaultPriceId: string }>('/api/v1/products', {
      name: 'Workshop',
      defaultPriceData: { currency: 'usdc', unitAmount: '100000000' },
    })
  ).body;
  const priceLines = (...ids: string[]) => ({ data: ids.map((priceId) => ({ priceId, quantity: 2 })) });
  const draft = (
    await api.post<Invoice>(INVOICES, {
      customerId,
      lineItems: priceLines(product.defaultPriceId, other.defaultPriceId),
    })
  ).body;
  t.is(draft.status, 'draft');

  t.is((await api.put(`/api/v1/prices/${product.defaultPriceId}`, { isActive: false })).status, 200);
  t.is((await api.put(`/api/v1/products/${other.id}/deactivate`, {})).status, 200);

  const edited = await api.put<Invoice>(`${INVOICES}/${draft.id}`, {
    memo: 'Thanks',
    lineItems: priceLines(other.defaultPriceId, product.defaultPriceId),
  });
  t.is(edited.status, 200, JSON.stringify(edited.body));
  t.like(edited.body, { memo: 'Thanks', amountDue: '700000000' });
  t.deepEqual(
    edited.body.lineItems.data.map((l) => l.priceId),
    [other.defaultPriceId, product.defaultPriceId],
  );
  t.is((await api.post<Invoice>(`${INVOICES}/${draft.id}/finalize`)).body.status, 'open');

  // Elsewhere the deactivated price and product are refused as before, naming the line.
  const fresh = await api.post<Invoice>(INVOICES, { customerId, lineItems: priceLines(product.defaultPriceId) });
  assertError(t, fresh, 400, { field: 'lineItems.data[0].priceId' });
  const byProduct = await api.post<Invoice>(INVOICES, {
    customerId,
    lineItems: { data: [{ priceData: { currency: 'usdc', unitAmount: '1000000', productId: other.id }, quantity: 1 }] },
  });
  assertError(t, byProduct, 400, { field: 'lineItems.data[0].priceData.productId', code: 'product_inactive' });
});
