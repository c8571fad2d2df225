import test from 'ava';
import { startInvoiceTestApp } from '../support/invoice-test-app.ts';
import { createMerchant } from '../support/weir-harness.ts';
import { assertError, createCustomer } from './helpers.ts';

type Setting = {
  id: string;
  numberingScheme: string;
  invoicePrefix: string;
  nextInvoiceSequence: number;
  description: string | null;
  footer: string | null;
};
type Invoice = { id: string; number: string; description: string | null; footer: string | null };

const lines = {
  data: [
    { priceData: { currency: 'usdc', unitAmount: '150000000', productData: { name: 'Consulting hour' } }, quantity: 1 },
  ],
};

test('invoice setting: defaults, an update numbers the next invoices and gives their description and footer; per tenant', async (t) => {
  const app = await startInvoiceTestApp(t);
  const alice = await createMerchant(app.url, 'Alice');
  const bob = await createMerchant(app.url, 'Bob');
  const customerId = await createCustomer(alice.api);
  const path = '/api/v1/organization/invoice-setting';

  const initial = await alice.api.get<Setting>(path);
  t.is(initial.status, 200, JSON.stringify(initial.body));
  t.like(initial.body, {
    numberingScheme: 'merchant_level',
    invoicePrefix: 'INV-',
    nextInvoiceSequence: 1,
    description: null,
    footer: null,
  });
  const first = (await alice.api.post<Invoice>('/api/v1/invoices', { customerId, lineItems: lines })).body;
  t.is(first.number, 'INV-000001');
  t.is((await alice.api.get<Setting>(path)).body.nextInvoiceSequence, 2);

  const updated = await alice.api.put<Setting>(path, {
    invoicePrefix: 'ACME-',
    nextInvoiceSequence: 1000,
    description: 'Consulting services',
    footer: 'Bank details on request',
  });
  t.is(updated.status, 200, JSON.stringify(updated.body));
  t.like(updated.body, {
    invoicePrefix: 'ACME-',
    nextInvoiceSequence: 1000,
    description: 'Consulting services',
    footer: 'Bank details on request',
  });
  const second = (await alice.api.post<Invoice>('/api/v1/invoices', { customerId, lineItems: lines })).body;
  t.is(second.number, 'ACME-001000');
  t.is(second.description, 'Consulting services');
  t.is(second.footer, 'Bank details on request');
  // A request's own footer wins.
  const third = (await alice.api.post<Invoice>('/api/v1/invoices', { customerId, lineItems: lines, footer: 'Own' }))
    .body;
  t.is(third.number, 'ACME-001001');
  t.is(third.footer, 'Own');
  t.is((await alice.api.get<Setting>(path)).body.nextInvoiceSequence, 1002);

  // POST works as PUT; null clears a default.
  const cleared = await alice.api.post<Setting>(path, { footer: null });
  t.is(cleared.status, 200);
  t.is(cleared.body.footer, null);
  t.is(cleared.body.description, 'Consulting services');

  // Validation names the field.
  for (const [body, field] of [
    [{ invoicePrefix: '' }, 'invoicePrefix'],
    [{ invoicePrefix: 'bad prefix' }, 'invoicePrefix'],
    [{ invoicePrefix: 'X'.repeat(21) }, 'invoicePrefix'],
    [{ nextInvoiceSequence: 0 }, 'nextInvoiceSequence'],
    [{ nextInvoiceSequence: 1.5 }, 'nextInvoiceSequence'],
    [{ numberingScheme: 'customer_level' }, 'numberingScheme'],
    [{ numberingScheme: 'weekly' }, 'numberingScheme'],
    [{ footer: 7 }, 'footer'],
  ] as const)
    assertError(t, await alice.api.put(path, body), 400, { field });
  assertError(t, await alice.api.put(path, {}), 400, { message: /nothing to update/ });

  // Another tenant keeps its own defaults, and the live environment its own.
  t.like((await bob.api.get<Setting>(path)).body, { invoicePrefix: 'INV-', nextInvoiceSequence: 1, footer: null });
  t.like((await alice.live.get<Setting>(path)).body, { invoicePrefix: 'INV-', nextInvoiceSequence: 1 });
  t.not((await bob.api.get<Setting>(path)).body.id, (await alice.api.get<Setting>(path)).body.id);
});
