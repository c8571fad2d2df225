import test from 'ava';
import { createManualClock } from '../../src/shared/clock.ts';
import { eventually } from '../support/api-client.ts';
import { startInvoiceTestApp } from '../support/invoice-test-app.ts';
import { recordingMailer } from '../support/recording-mailer.ts';
import { createMerchant } from '../support/weir-harness.ts';
import { payInFull, type Session } from './helpers.ts';

type Invoice = { id: string; number: string; status: string };

const lines = {
  data: [
    { priceData: { currency: 'usdc', unitAmount: '150000000', productData: { name: 'Consulting hour' } }, quantity: 2 },
  ],
};

async function setUp(t: Parameters<typeof startInvoiceTestApp>[0]) {
  const { mailer, sent } = recordingMailer();
  const app = await startInvoiceTestApp(t, {
    clock: createManualClock(Date.parse('2026-03-01T00:00:00.000Z')),
    mailer,
  });
  const { api } = await createMerchant(app.url, 'Acme Studio');
  t.is(
    (
      await api.put('/api/v1/organization', {
        supportEmail: 'help@acme.example',
        taxIdentificationNumber: 'PT123456789',
      })
    ).status,
    200,
  );
  t.is(
    (await api.put('/api/v1/organization/brand', { brandColor: '#0a7d5a', brandLogo: 'https://acme.example/logo.png' }))
      .status,
    200,
  );
  const customer = (await api.post<{ id: string }>('/api/v1/customers', { email: 'ada@example.com', name: 'Ada' }))
    .body;
  const invoice = (
    await api.post<Invoice>('/api/v1/invoices', { customerId: customer.id, dueDate: '2026-03-31', lineItems: lines })
  ).body;
  t.is((await api.post(`/api/v1/invoices/${invoice.id}/finalize`)).status, 200);
  return { app, api, sent, invoice };
}

test('an invoice paid on chain through its checkout session: the customer is mailed a branded receipt, once', async (t) => {
  const { app, api, sent, invoice } = await setUp(t);
  const location = (await fetch(`${app.url}/invoices/${invoice.id}/pay`, { redirect: 'manual' })).headers.get(
    'location',
  )!;
  const session = (await api.get<Session>(`/api/v1/checkout/sessions/${location.split('/').pop()!}`)).body;
  await payInFull({ url: app.url, bus: app.bus }, api, session);

  const receipt = await eventually(async () => sent[0], 'the receipt');
  t.is(receipt.to, 'ada@example.com');
  t.is(receipt.subject, `Receipt for invoice ${invoice.number} from Acme Studio`);
  t.regex(receipt.text, new RegExp(`we received 3.00 USDC for invoice ${invoice.number} on 2026-03-01`));
  for (const part of ['Hello Ada,', 'help@acme.example', 'Tax no.: PT123456789'])
    t.true(receipt.text.includes(part), part);
  t.false(receipt.text.includes('Pay online'), 'a receipt asks for nothing');
  t.true(receipt.html.includes('#0a7d5a'));
  t.true(receipt.html.includes('https://acme.example/logo.png'));
  t.is((await api.get<Invoice>(`/api/v1/invoices/${invoice.id}`)).body.status, 'paid');

  // Recorded in the mail's own stream, and only one mail went out.
  const recorded = await eventually(async () => {
    const events = (await app.eventStore.readAll(null, 100_000)).filter((e) => e.type === 'MailSent');
    return events.length > 0 ? events : undefined;
  }, 'MailSent');
  t.is(recorded.length, 1);
  t.like(recorded[0]!.data, { to: 'ada@example.com', messageId: 'message-1@test' });
  t.is(sent.length, 1);
});

test('an invoice marked as paid out of band: the customer is mailed a receipt', async (t) => {
  const { api, sent, invoice } = await setUp(t);
  t.is((await api.post<Invoice>(`/api/v1/invoices/${invoice.id}/pay`)).body.status, 'paid');
  const receipt = await eventually(async () => sent[0], 'the receipt');
  t.is(receipt.to, 'ada@example.com');
  t.regex(receipt.subject, /^Receipt for invoice /);
  t.regex(receipt.text, /we received 3.00 USDC/);
});
