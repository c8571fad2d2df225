import test from 'ava';
import { eventually } from '../support/api-client.ts';
import { recordingMailer } from '../support/recording-mailer.ts';
import { checkWebhookBody } from '../support/response-check.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';
import { assertError, createCustomer, getSession, payInFull, sessionEvents, type Session } from './helpers.ts';

type Intent = {
  id: string;
  object: string;
  status: string;
  checkoutSessionId: string;
  isMarkRefunded: boolean;
  markRefundedAt: string | null;
  markRefundedComment: string | null;
};
type SessionWithIntent = Session & { paymentIntent: { id: string; status: string; isMarkRefunded?: boolean } };

test('mark-as-refund records that the merchant refunded a paid intent, once; refused where nothing was paid; tenancy', async (t) => {
  const weir = await startTestWeir(t);
  const alice = await createMerchant(weir.url, 'Alice');
  const bob = await createMerchant(weir.url, 'Bob');
  const session = (await alice.api.post<SessionWithIntent>('/api/v1/checkout/sessions', sessionRequest())).body;
  const intentId = session.paymentIntent.id;
  const path = `/api/v1/payment-intents/${intentId}/mark-as-refund`;

  // Nothing received yet: nothing to refund, and nothing written.
  assertError(t, await alice.api.post(path, {}), 400, {
    code: 'status_transition_invalid',
    message: /nothing to refund/,
  });

  await payInFull(weir, alice.api, session);
  assertError(t, await bob.api.post(path, {}), 404, { code: 'resource_missing' });
  assertError(t, await alice.live.post(path, {}), 404, { code: 'resource_missing' });
  assertError(t, await alice.api.post('/api/v1/payment-intents/pi_unknown/mark-as-refund', {}), 404);
  assertError(t, await alice.api.post(path, { markRefundedComment: 'x'.repeat(501) }), 400, {
    field: 'markRefundedComment',
  });
  assertError(t, await alice.api.post(path, { markRefundedComment: 7 }), 400, { field: 'markRefundedComment' });

  const marked = await alice.api.post<Intent>(path, { markRefundedComment: 'refunded by bank transfer, ticket 42' });
  t.is(marked.status, 200, JSON.stringify(marked.body));
  t.is(marked.body.id, intentId);
  t.is(marked.body.object, 'payment_intent');
  t.is(marked.body.status, 'succeeded');
  t.true(marked.body.isMarkRefunded);
  t.is(marked.body.markRefundedComment, 'refunded by bank transfer, ticket 42');
  t.truthy(marked.body.markRefundedAt);
  t.is(marked.body.checkoutSessionId, session.id);

  // Again: the same answer, and no second event.
  const again = await alice.api.post<Intent>(path, { markRefundedComment: 'another comment' });
  t.is(again.status, 200);
  t.is(again.body.markRefundedComment, 'refunded by bank transfer, ticket 42');
  t.is((await sessionEvents(weir, session.id)).filter((e) => e.type === 'PaymentMarkedRefunded').length, 1);

  // Visible on the session.
  const shown = (await getSession(alice.api, session.id)) as unknown as SessionWithIntent;
  t.true(shown.paymentIntent.isMarkRefunded);
});

test('payment-receipts/send mails the payer a receipt of a paid session; a 400 without an address or a payment; tenancy', async (t) => {
  const { mailer, sent } = recordingMailer();
  const weir = await startTestWeir(t, {}, { mailer });
  const alice = await createMerchant(weir.url, 'Alice');
  const bob = await createMerchant(weir.url, 'Bob');
  const customerId = await createCustomer(alice.api, 'ada@example.com');
  const withCustomer = (
    await alice.api.post<SessionWithIntent>('/api/v1/checkout/sessions', { ...sessionRequest(), customerId })
  ).body;
  const anonymous = (await alice.api.post<SessionWithIntent>('/api/v1/checkout/sessions', sessionRequest())).body;
  const send = (s: SessionWithIntent) => `/api/v1/payment-intents/${s.paymentIntent.id}/payment-receipts/send`;

  // Not paid yet.
  assertError(t, await alice.api.post(send(withCustomer)), 400, { code: 'status_transition_invalid' });
  await payInFull(weir, alice.api, withCustomer);
  await payInFull(weir, alice.api, anonymous);
  const before = sent.length;

  assertError(t, await bob.api.post(send(withCustomer)), 404, { code: 'resource_missing' });
  // Nobody to send it to.
  assertError(t, await alice.api.post(send(anonymous)), 400, {
    field: 'customerDetails.email',
    code: 'parameter_missing',
  });
  t.is(sent.length, before);

  const receipt = await alice.api.post<{
    id: string;
    paymentIntentId: string;
    organizationId: string;
    receiptNumber: string;
    to: string;
  }>(send(withCustomer));
  t.is(receipt.status, 200, JSON.stringify(receipt.body));
  t.is(receipt.body.paymentIntentId, withCustomer.paymentIntent.id);
  t.is(receipt.body.organizationId, alice.organizationId);
  t.regex(receipt.body.receiptNumber, /^RCPT-[0-9A-F]{10}$/);
  t.is(receipt.body.to, 'ada@example.com');
  // Sent by the mail dispatcher, from the outbox.
  const mail = await eventually(async () => sent[before], 'the receipt mail');
  t.is(mail.to, 'ada@example.com');
  t.true(mail.subject.includes(receipt.body.receiptNumber));
  t.regex(mail.text, /received 3\.00 USDC\b/);
  // Sending again sends it again, with the same number.
  const again = await alice.api.post<{ receiptNumber: string }>(send(withCustomer));
  t.is(again.body.receiptNumber, receipt.body.receiptNumber);
  await eventually(async () => (sent.length === before + 2 ? true : undefined), 'the second receipt mail');
  t.is(sent[before + 1]!.subject, mail.subject);
  t.is((await sessionEvents(weir, withCustomer.id)).filter((e) => e.type === 'PaymentReceiptRequested').length, 2);
});

test('GET /payment-intents/{id} answers the object its payment_intent.* webhooks carry, and the list shows it; tenancy, and a 404 for an unknown id', async (t) => {
  const weir = await startTestWeir(t);
  const alice = await createMerchant(weir.url, 'Alice');
  const bob = await createMerchant(weir.url, 'Bob');
  const receiver = await startWebhookReceiver();
  t.teardown(() => receiver.close());
  const endpoint = await alice.api.post('/api/v1/webhook-endpoints', {
    description: 'intents',
    url: receiver.url,
    enabledEvents: { events: ['payment_intent.succeeded', 'payment_intent.canceled'] },
  });
  t.is(endpoint.status, 200, JSON.stringify(endpoint.body));
  const paid = (await alice.api.post<SessionWithIntent>('/api/v1/checkout/sessions', sessionRequest())).body;
  const canceled = (await alice.api.post<SessionWithIntent>('/api/v1/checkout/sessions', sessionRequest())).body;
  await payInFull(weir, alice.api, paid);
  t.is((await alice.api.post(`/api/v1/checkout/sessions/${canceled.id}/cancel`)).status, 200);

  type Hook = { type: string; data: { object: Intent } };
  const hooks = () => receiver.received.map((r) => JSON.parse(r.body) as Hook);
  await receiver.waitFor(() => hooks().length >= 2);
  const hookOf = (type: string) => hooks().find((h) => h.type === type)!.data.object;
  for (const { body } of receiver.received) t.notThrows(() => checkWebhookBody(body));
  for (const [type, session] of [
    ['payment_intent.succeeded', paid],
    ['payment_intent.canceled', canceled],
  ] as const) {
    const sent = hookOf(type);
    t.is(sent.id, session.paymentIntent.id, type);
    // The client's answer is checked against the served document as well.
    const read = await alice.api.get<Intent>(`/api/v1/payment-intents/${session.paymentIntent.id}`);
    t.is(read.status, 200, JSON.stringify(read.body));
    t.deepEqual(read.body, sent, type);
  }

  const listed = await alice.api.get<{ count: number; data: Intent[] }>('/api/v1/payment-intents');
  t.is(listed.status, 200, JSON.stringify(listed.body));
  t.deepEqual(listed.body.data.map((i) => i.id).sort(), [paid.paymentIntent.id, canceled.paymentIntent.id].sort());
  t.deepEqual(
    listed.body.data.find((i) => i.id === paid.paymentIntent.id),
    hookOf('payment_intent.succeeded'),
  );
  const succeeded = await alice.api.get<{ data: Intent[] }>('/api/v1/payment-intents?status=succeeded');
  t.deepEqual(
    succeeded.body.data.map((i) => i.id),
    [paid.paymentIntent.id],
  );
  const bySession = await alice.api.get<{ data: Intent[] }>(`/api/v1/payment-intents?checkoutSessionId=${canceled.id}`);
  t.deepEqual(
    bySession.body.data.map((i) => i.checkoutSessionId),
    [canceled.id],
  );
  assertError(t, await alice.api.get('/api/v1/payment-intents?status=paid'), 400, { field: 'status' });

  const path = `/api/v1/payment-intents/${paid.paymentIntent.id}`;
  assertError(t, await bob.api.get(path), 404, { code: 'resource_missing' });
  assertError(t, await alice.live.get(path), 404, { code: 'resource_missing' });
  assertError(t, await alice.api.get('/api/v1/payment-intents/pi_unknown'), 404, { code: 'resource_missing' });
  // Neither B's list nor A's live one shows A's test intents.
  t.deepEqual((await bob.api.get<{ data: Intent[] }>('/api/v1/payment-intents')).body.data, []);
  t.deepEqual((await alice.live.get<{ data: Intent[] }>('/api/v1/payment-intents')).body.data, []);
});
