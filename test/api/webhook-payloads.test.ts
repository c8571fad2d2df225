import test, { type ExecutionContext } from 'ava';
import { getAddress } from 'viem';
import { TEST_NETWORK } from '../../src/chain-ingest/test-rail.ts';
import { createManualClock } from '../../src/shared/clock.ts';
import { apiClient, eventually } from '../support/api-client.ts';
import { chainPublisher, randomHash } from '../support/chain-publisher.ts';
import { checkWebhookBody } from '../support/response-check.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';
import { getSession, payInFull, payLate, reveal, untilCanceled } from './helpers.ts';

type Schema = { $ref?: string; allOf?: Schema[]; properties?: Record<string, Schema> };
type Document = {
  webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: Schema }> } } }>;
  components: { schemas: Record<string, Schema> };
};
type Hook = { type: string; data: { object: Record<string, unknown> } };

/** The properties a schema names, through its references and `allOf` parts. */
function propertiesOf(document: Document, schema: Schema): string[] {
  if (schema.$ref) return propertiesOf(document, document.components.schemas[schema.$ref.split('/').pop()!]!);
  return [
    ...Object.keys(schema.properties ?? {}),
    ...(schema.allOf ?? []).flatMap((part) => propertiesOf(document, part)),
  ];
}

/** The schema of an event's `data.object` in the served document. */
const dataObjectOf = (document: Document, type: string) =>
  document.webhooks[type]!.post.requestBody.content['application/json']!.schema.properties!.data!.properties!.object!;

/** A Weir on a manual clock, a merchant, and a receiver subscribed to `events` (each body it receives is checked against the document: a mismatch fails `waitFor`). */
async function merchantWithReceiver(t: ExecutionContext, events: string[]) {
  const clock = createManualClock(Date.parse('2026-05-01T08:00:00Z'));
  const weir = await startTestWeir(t, {}, { clock });
  const { api, testSecretKey } = await createMerchant(weir.url);
  const receiver = await startWebhookReceiver();
  t.teardown(() => receiver.close());
  const endpoint = (
    await api.post<{ id: string }>('/api/v1/webhook-endpoints', {
      description: 'd',
      url: receiver.url,
      enabledEvents: { events },
    })
  ).body;
  return { weir, api, receiver, chain: chainPublisher(weir.bus), clock, testSecretKey, endpointId: endpoint.id };
}

/**
 * A payment detected, then its block reorganized away and its height final in another block: the
 * session's intent needs a payment again (`payment_intent.payment_failed`).
 */
async function failPayment(
  weir: Awaited<ReturnType<typeof startTestWeir>>,
  api: Awaited<ReturnType<typeof createMerchant>>['api'],
  chain: ReturnType<typeof chainPublisher>,
) {
  const withdrawnFrom = (await api.post<{ id: string }>('/api/v1/checkout/sessions', sessionRequest())).body.id;
  const shown = await reveal(weir, api, withdrawnFrom);
  const blockHash = randomHash();
  const transfer = await chain.transfer({
    to: shown.address,
    amount: shown.amountDueRaw,
    blockNumber: 7000,
    blockHash,
  });
  await eventually(
    async () => ((await getSession(api, withdrawnFrom)).paymentIntent.status === 'processing' ? true : undefined),
    'the transfer to be detected',
  );
  await chain.reorg([{ number: 7000, hash: blockHash }]);
  await chain.final(7000, randomHash());
  return { withdrawnFrom, transfer };
}

/** Pays `address` `amount` (chain units) in block `blockNumber`, final at once. */
const payerTo =
  (chain: ReturnType<typeof chainPublisher>, address: string) => async (amount: string, blockNumber: number) => {
    const blockHash = randomHash();
    const transfer = await chain.transfer({ to: address, amount, blockNumber, blockHash });
    await chain.final(blockNumber, blockHash);
    return transfer;
  };

/** The first `checkout_session.overpayment` the receiver gets, checked against the document: its body and `data.object`. */
async function firstOverpayment(t: ExecutionContext, receiver: Awaited<ReturnType<typeof startWebhookReceiver>>) {
  const typeOf = (body: string) => (JSON.parse(body) as Hook).type;
  const received = await receiver.waitFor((all) =>
    all.some((hook) => typeOf(hook.body) === 'checkout_session.overpayment'),
  );
  const body = received.find((hook) => typeOf(hook.body) === 'checkout_session.overpayment')!.body;
  t.notThrows(() => checkWebhookBody(body));
  return { id: (JSON.parse(body) as { id: string }).id, overpaid: (JSON.parse(body) as Hook).data.object };
}

test('the late payment and failed payment webhooks, as delivered, match their documented schemas, which name latePayment and lastPaymentError', async (t) => {
  const { weir, api, receiver, chain } = await merchantWithReceiver(t, [
    'checkout_session.late_payment',
    'payment_intent.payment_failed',
  ]);

  const { withdrawnFrom, transfer } = await failPayment(weir, api, chain);

  // A session canceled, then paid anyway.
  const canceled = (await api.post<{ id: string }>('/api/v1/checkout/sessions', sessionRequest())).body.id;
  const shownOnCanceled = await reveal(weir, api, canceled);
  await api.post(`/api/v1/checkout/sessions/${canceled}/cancel`);
  await untilCanceled(api, canceled);
  await payLate(weir, api, canceled, shownOnCanceled);

  const typeOf = (body: string) => (JSON.parse(body) as Hook).type;
  const received = await receiver.waitFor((all) =>
    ['payment_intent.payment_failed', 'checkout_session.late_payment'].every((type) =>
      all.some((hook) => typeOf(hook.body) === type),
    ),
  );
  const bodyOf = (type: string) => received.find((hook) => typeOf(hook.body) === type)!.body;
  for (const type of ['payment_intent.payment_failed', 'checkout_session.late_payment'])
    t.notThrows(() => checkWebhookBody(bodyOf(type)), type);

  const failed = (JSON.parse(bodyOf('payment_intent.payment_failed')) as Hook).data.object;
  t.is(failed['checkoutSessionId'], withdrawnFrom);
  t.like(failed['lastPaymentError'], {
    type: 'chain_error',
    code: 'payment_withdrawn',
    transactionHash: transfer.transactionHash,
    blockNumber: 7000,
  });
  const latePaid = (JSON.parse(bodyOf('checkout_session.late_payment')) as Hook).data.object;
  t.is(latePaid['id'], canceled);
  const paidLate = latePaid['paymentIntent'] as { transactions: { late: boolean }[] };
  t.deepEqual(latePaid['latePayment'], paidLate.transactions[0]);
  t.like(latePaid['latePayment'], { late: true });

  const document = (await (await fetch(`${weir.url}/api/v1/openapi.json`)).json()) as Document;
  t.true(propertiesOf(document, dataObjectOf(document, 'payment_intent.payment_failed')).includes('lastPaymentError'));
  t.true(propertiesOf(document, dataObjectOf(document, 'checkout_session.late_payment')).includes('latePayment'));
});

test('a failed payment intent goes to an endpoint subscribed by the specification’s payment_intent.failed under that name, to one by the reference’s name or `*` under payment_intent.payment_failed: one delivery each, one event id, the documented payload', async (t) => {
  const clock = createManualClock(Date.parse('2026-05-01T08:00:00Z'));
  const weir = await startTestWeir(t, {}, { clock });
  const { api } = await createMerchant(weir.url);
  const subscriptions: Record<string, string[]> = {
    spec: ['payment_intent.failed'],
    reference: ['payment_intent.payment_failed'],
    all: ['*'],
    both: ['payment_intent.failed', 'payment_intent.payment_failed'],
    allAndSpec: ['*', 'payment_intent.failed'],
  };
  const expected: Record<string, string> = {
    spec: 'payment_intent.failed',
    reference: 'payment_intent.payment_failed',
    all: 'payment_intent.payment_failed',
    both: 'payment_intent.payment_failed',
    allAndSpec: 'payment_intent.failed',
  };
  const endpoints: Record<string, { id: string; receiver: Awaited<ReturnType<typeof startWebhookReceiver>> }> = {};
  for (const [name, events] of Object.entries(subscriptions)) {
    const receiver = await startWebhookReceiver();
    t.teardown(() => receiver.close());
    const created = await api.post<{ id: string; enabledEvents: { events: string[] } }>('/api/v1/webhook-endpoints', {
      description: name,
      url: receiver.url,
      enabledEvents: { events },
    });
    t.is(created.status, 200, name);
    t.deepEqual(created.body.enabledEvents.events, events, `${name}: answered back as sent`);
    endpoints[name] = { id: created.body.id, receiver };
  }

  const { withdrawnFrom } = await failPayment(weir, api, chainPublisher(weir.bus));
  const failedTypes = ['payment_intent.failed', 'payment_intent.payment_failed'];
  const failedOf = (hooks: { body: string }[]) =>
    hooks
      .map((hook) => JSON.parse(hook.body) as Hook & { id: string })
      .filter((hook) => failedTypes.includes(hook.type));
  const ids = new Set<string>();
  for (const [name, { id, receiver }] of Object.entries(endpoints)) {
    await receiver.waitFor((all) => failedOf(all).length > 0);
    // Every delivery of the endpoint done (the failed payment's among them, written with every other
    // endpoint's): a second one for the event would be in this log.
    const log = await eventually(async () => {
      const page = await api.get<{ data: { eventId: string; eventType: string; status: string }[] }>(
        `/api/v1/webhook-endpoints/${id}/deliveries`,
      );
      return page.body.data.every((d) => d.status === 'succeeded') ? page.body.data : undefined;
    }, `${name}: its deliveries made`);
    const failedDeliveries = log.filter((d) => failedTypes.includes(d.eventType));
    t.deepEqual(
      failedDeliveries.map((d) => d.eventType),
      [expected[name]],
      `${name}: one delivery, under the name subscribed`,
    );
    const received = failedOf(receiver.received);
    t.deepEqual(
      received.map((hook) => hook.type),
      [expected[name]],
      `${name}: received once, typed ${expected[name]}`,
    );
    t.is(received[0]!.id, failedDeliveries[0]!.eventId);
    t.is(received[0]!.data.object['checkoutSessionId'], withdrawnFrom);
    t.like(received[0]!.data.object['lastPaymentError'], { code: 'payment_withdrawn' }, name);
    ids.add(received[0]!.id);
  }
  t.is(ids.size, 1, 'one event, one id, under either name');

  const document = (await (await fetch(`${weir.url}/api/v1/openapi.json`)).json()) as Document & {
    webhooks: Record<string, { post: { description?: string } }>;
  };
  t.deepEqual(dataObjectOf(document, 'payment_intent.failed'), dataObjectOf(document, 'payment_intent.payment_failed'));
  t.true(propertiesOf(document, dataObjectOf(document, 'payment_intent.failed')).includes('lastPaymentError'));
  for (const type of failedTypes)
    t.regex(document.webhooks[type]!.post.description ?? '', /one event under two names/, type);
});

test('a payment beyond a completed session’s total sends checkout_session.overpayment, with the transfer and the amount over as integer strings, as documented', async (t) => {
  const { weir, api, receiver, chain } = await merchantWithReceiver(t, ['*']);
  const id = (await api.post<{ id: string }>('/api/v1/checkout/sessions', sessionRequest())).body.id;
  const shown = await reveal(weir, api, id);
  const pay = payerTo(chain, shown.address);
  await pay(shown.amountDueRaw, 8100);
  await eventually(async () => ((await getSession(api, id)).status === 'complete' ? true : undefined), 'completion');
  // The payer sends a tenth of the total again.
  const extra = (BigInt(shown.amountDueRaw) / 10n).toString();
  const again = await pay(extra, 8101);

  const { overpaid } = await firstOverpayment(t, receiver);
  t.is(overpaid['id'], id);
  const session = (await api.get<{ amountOverpaid: string }>(`/api/v1/checkout/sessions/${id}`)).body;
  t.is(overpaid['amountOverpaid'], session.amountOverpaid);
  const over = overpaid['amountOverpaid'];
  t.is(typeof over, 'string', 'amounts go as strings');
  t.regex(over as string, /^[1-9][0-9]*$/, 'the amount over, an integer string');
  t.like(overpaid['overpayment'], { transactionHash: again.transactionHash, amountRaw: extra });
  const { amount } = overpaid['overpayment'] as { amount: string };
  t.regex(amount, /^[1-9][0-9]*$/);
  t.is(amount, over as string, 'all of a payment after completion is over');

  const document = (await (await fetch(`${weir.url}/api/v1/openapi.json`)).json()) as Document;
  t.true(propertiesOf(document, dataObjectOf(document, 'checkout_session.overpayment')).includes('overpayment'));
});

test('an overpayment counts once final: one reorged away while pending sends no checkout_session.overpayment; a final one is past reorgs, so amountOverpaid never goes back down and each webhook tells a greater one', async (t) => {
  const { weir, api, receiver, chain } = await merchantWithReceiver(t, ['checkout_session.overpayment']);
  const id = (await api.post<{ id: string }>('/api/v1/checkout/sessions', sessionRequest())).body.id;
  const shown = await reveal(weir, api, id);
  const pay = payerTo(chain, shown.address);
  await pay(shown.amountDueRaw, 8300);
  await eventually(async () => ((await getSession(api, id)).status === 'complete' ? true : undefined), 'completion');
  const tenth = BigInt(shown.amountDueRaw) / 10n;
  // Sent over, its block reorged away and its height final in another: it never arrived.
  const pendingOnly = await chain.transfer({
    to: shown.address,
    amount: tenth.toString(),
    blockNumber: 8301,
    blockHash: randomHash(),
  });
  await chain.reorg([{ number: 8301, hash: pendingOnly.blockHash }]);
  await chain.final(8301, randomHash());
  // Over and final; then a reorg message naming its block (no follower sends one past finality) takes nothing back.
  const final = await pay(tenth.toString(), 8302);
  await chain.reorg([{ number: 8302, hash: final.blockHash }]);
  // A network's chain messages are handled in order: this one's webhook comes after all of the above.
  const more = await pay((tenth / 2n).toString(), 8303);
  const received = await receiver.waitFor((all) => all.some((hook) => hook.body.includes(more.transactionHash)));
  const overpayments = received
    .map((hook) => JSON.parse(hook.body) as Hook)
    .filter((hook) => hook.type === 'checkout_session.overpayment');
  // USDC has 6 decimals; amounts are shown in 10^8 units.
  t.deepEqual(
    overpayments.map((hook) => hook.data.object['amountOverpaid']),
    [(tenth * 100n).toString(), ((tenth + tenth / 2n) * 100n).toString()],
  );
  t.deepEqual(
    overpayments.map((hook) => (hook.data.object['overpayment'] as { transactionHash: string }).transactionHash),
    [final.transactionHash, more.transactionHash],
  );
  const session = (await api.get<{ amountOverpaid: string }>(`/api/v1/checkout/sessions/${id}`)).body;
  t.is(session.amountOverpaid, ((tenth + tenth / 2n) * 100n).toString());
  // The log withdrew the pending transfer alone (by the reorg, then settled by its height's final).
  const log = await weir.eventStore.readStream(`checkout_session-${id}`);
  const hashOf = new Map(
    log
      .filter((e) => e.type === 'PaymentDetected')
      .map((e) => {
        const { payment } = e.data as { payment: { transferId: string; transactionHash: string } };
        return [payment.transferId, payment.transactionHash] as const;
      }),
  );
  t.deepEqual(
    [
      ...new Set(
        log
          .filter((e) => e.type === 'PaymentWithdrawn')
          .map((e) => hashOf.get((e.data as { transferId: string }).transferId)),
      ),
    ],
    [pendingOnly.transactionHash],
  );
});

test('an excess under 10^-8 is neither shown nor announced, at completion or after it; the transfer that makes amountOverpaid 0.00000001 sends checkout_session.overpayment once', async (t) => {
  const { weir, api, receiver, chain } = await merchantWithReceiver(t, ['checkout_session.overpayment']);
  const request = sessionRequest('100000000', 1);
  request.lineItems.data[0]!.priceData.currency = 'dai';
  const made = (
    await api.post<{ id: string; addresses: { asset: { id: string; currency: string } }[] }>(
      '/api/v1/checkout/sessions',
      request,
    )
  ).body;
  const dai = made.addresses.find((a) => a.asset.currency === 'dai')!;
  const shown = (
    await apiClient(weir.url).post<{ address: string; amountDueRaw: string }>(`/checkout/${made.id}/payment-method`, {
      assetId: dai.asset.id,
    })
  ).body;
  const pay = async (amount: string, blockNumber: number) => {
    const blockHash = randomHash();
    const transfer = await chain.transfer({ to: shown.address, amount, asset: 'dai', blockNumber, blockHash });
    await chain.final(blockNumber, blockHash);
    return transfer;
  };
  // Completed 1 wei over: 10^-18 DAI, nothing the API's amount can show.
  await pay((BigInt(shown.amountDueRaw) + 1n).toString(), 8200);
  const completed = await eventually(async () => {
    const session = (await api.get<{ status: string; amountOverpaid: string }>(`/api/v1/checkout/sessions/${made.id}`))
      .body;
    return session.status === 'complete' ? session : undefined;
  }, 'completion');
  t.is(completed.amountOverpaid, '0');
  // 1 wei more after completion: still under 10^-8.
  await pay('1', 8201);
  // 9,999,999,998 wei more: 10^10 wei over in all, 0.00000001 DAI.
  const unit = await pay('9999999998', 8202);
  const received = await receiver.waitFor((all) => all.some((hook) => hook.body.includes(unit.transactionHash)));
  const overpayments = received
    .map((hook) => JSON.parse(hook.body) as Hook)
    .filter((hook) => hook.type === 'checkout_session.overpayment');
  t.is(overpayments.length, 1);
  t.is(overpayments[0]!.data.object['amountOverpaid'], '1');
  t.like(overpayments[0]!.data.object['overpayment'], {
    transactionHash: unit.transactionHash,
    amountRaw: '9999999998',
  });
  const session = (await api.get<{ amountOverpaid: string }>(`/api/v1/checkout/sessions/${made.id}`)).body;
  t.is(session.amountOverpaid, '1');
  // The log holds the one announcement: the 1 wei was counted and told no one.
  const log = await weir.eventStore.readStream(`checkout_session-${made.id}`);
  t.is(log.filter((e) => e.type === 'OverpaymentReceived').length, 1);
});

/** A customer and a monthly plan at `unitAmount`, and the first invoice of its recurring series, finalized. */
async function finalizedFirstInvoice(api: Awaited<ReturnType<typeof merchantWithReceiver>>['api'], unitAmount: string) {
  const customer = (await api.post<{ id: string }>('/api/v1/customers', { email: 'billing@client.example' })).body;
  const product = (
    await api.post<{ defaultPrice: { id: string } }>('/api/v1/products', {
      name: 'Hosting',
      defaultPriceData: { currency: 'usdc', unitAmount, type: 'recurring', interval: 'month', intervalCount: 1 },
    })
  ).body;
  const draft = await api.post<{ id: string }>('/api/v1/invoices', {
    customerId: customer.id,
    invoiceType: 'recurring',
    interval: 'month',
    daysUntilDue: 10,
    lineItems: { data: [{ priceId: product.defaultPrice.id, quantity: 1 }] },
  });
  if (draft.status !== 200) throw new Error(JSON.stringify(draft.body));
  const finalized = await api.post<{ id: string; status: string }>(`/api/v1/invoices/${draft.body.id}/finalize`);
  if (finalized.status !== 200) throw new Error(JSON.stringify(finalized.body));
  return finalized.body.id;
}

test('every webhook of the first invoice of a recurring series names its subscription, as the API’s invoice does, where they said subscriptionId null', async (t) => {
  const invoiceEvents = ['invoice.finalized', 'invoice.paid', 'invoice.marked_as_paid', 'invoice.marked_uncollectible'];
  const { api, receiver } = await merchantWithReceiver(t, [...invoiceEvents, 'customer.subscription.created']);
  // Marked paid, and marked uncollectible, out of band; a series with nothing to pay is paid when
  // finalized, before its subscription exists.
  const markedPaid = await finalizedFirstInvoice(api, '1000000000');
  t.is((await api.post(`/api/v1/invoices/${markedPaid}/pay`)).status, 200);
  const uncollectible = await finalizedFirstInvoice(api, '2000000000');
  t.is((await api.post(`/api/v1/invoices/${uncollectible}/mark-uncollectible`)).status, 200);
  const free = await finalizedFirstInvoice(api, '0');
  const expected: [string, string][] = [
    [markedPaid, 'invoice.finalized'],
    [markedPaid, 'invoice.marked_as_paid'],
    [uncollectible, 'invoice.finalized'],
    [uncollectible, 'invoice.marked_uncollectible'],
    [free, 'invoice.finalized'],
    [free, 'invoice.paid'],
  ];

  const hooks = () => receiver.received.map((r) => JSON.parse(r.body) as Hook);
  const invoiceHooks = () => hooks().filter((h) => invoiceEvents.includes(h.type));
  await receiver.waitFor(() => invoiceHooks().length >= expected.length && hooks().length >= expected.length + 3);
  t.deepEqual(
    invoiceHooks()
      .map((h) => [h.data.object['id'], h.type])
      .sort(),
    [...expected].sort(),
  );
  const created = hooks().filter((h) => h.type === 'customer.subscription.created');
  for (const hook of invoiceHooks()) {
    const invoiceId = hook.data.object['id'] as string;
    const subscription = created.find((s) => s.data.object['latestInvoiceId'] === invoiceId)?.data.object['id'];
    t.truthy(subscription, `a subscription billed by ${invoiceId}`);
    t.is(hook.data.object['subscriptionId'], subscription, `${hook.type} of ${invoiceId} names its subscription`);
    const read = await eventually(async () => {
      const body = (await api.get<{ subscriptionId: string | null }>(`/api/v1/invoices/${invoiceId}`)).body;
      return body.subscriptionId === null ? undefined : body;
    }, `invoice ${invoiceId} to name its subscription`);
    t.is(hook.data.object['subscriptionId'], read.subscriptionId, 'as the API says');
  }
});

test('a checkout session opened on the pay page of a subscription’s invoice names the subscription, in its GET and its checkout_session.completed webhook, where both said subscriptionId null', async (t) => {
  const { weir, api, receiver } = await merchantWithReceiver(t, ['checkout_session.completed']);
  const invoiceId = await finalizedFirstInvoice(api, '1000000000');
  const subscriptionId = (await api.get<{ subscriptionId: string | null }>(`/api/v1/invoices/${invoiceId}`)).body
    .subscriptionId;
  t.truthy(subscriptionId, 'the invoice names its subscription from its finalize on');
  const page = await fetch(`${weir.url}/invoices/${invoiceId}/pay`, { redirect: 'manual' });
  t.is(page.status, 302);
  const sessionId = page.headers.get('location')!.split('/').pop()!;
  t.like(await getSession(api, sessionId), { invoiceId, subscriptionId, mode: 'payment' });
  await payInFull(weir, api, await getSession(api, sessionId));
  const hooks = () => receiver.received.map((r) => JSON.parse(r.body) as Hook);
  const completed = () =>
    hooks().find((h) => h.type === 'checkout_session.completed' && h.data.object['id'] === sessionId);
  await receiver.waitFor(() => completed() !== undefined);
  t.like(completed()!.data.object, { invoiceId, subscriptionId });
  // The subscription it names is the one the invoice's finalize created, and the payment starts it.
  const started = await eventually(async () => {
    const s = await api.get<{ status: string; latestInvoice: { id: string } | null }>(
      `/api/v1/subscriptions/${subscriptionId}`,
    );
    return s.status === 200 && s.body.status === 'active' ? s.body : undefined;
  }, `subscription ${subscriptionId} to start`);
  t.is(started.latestInvoice?.id, invoiceId);
});

test('one transfer that completes a session and goes past its total sends checkout_session.overpayment once, with the amount over; a restart replays it as the same event, not a second', async (t) => {
  const { weir, api, receiver, chain, clock, testSecretKey, endpointId } = await merchantWithReceiver(t, ['*']);
  const id = (await api.post<{ id: string }>('/api/v1/checkout/sessions', sessionRequest())).body.id;
  const shown = await reveal(weir, api, id);
  // The payer sends the total and a tenth more, in one transfer.
  const over = BigInt(shown.amountDueRaw) / 10n;
  const sent = (BigInt(shown.amountDueRaw) + over).toString();
  const paid = await payerTo(chain, shown.address)(sent, 8200);

  const { id: first, overpaid } = await firstOverpayment(t, receiver);
  t.is(overpaid['id'], id);
  t.is(overpaid['status'], 'complete');
  const session = (await api.get<{ amountOverpaid: string }>(`/api/v1/checkout/sessions/${id}`)).body;
  t.is(overpaid['amountOverpaid'], session.amountOverpaid);
  // USDC has 6 decimals; amounts are shown in 10^8 units.
  t.is(overpaid['amountOverpaid'], (over * 100n).toString());
  t.like(overpaid['overpayment'], { transactionHash: paid.transactionHash, amountRaw: sent });

  // After a restart (the log replayed), more money over: its event is the second, the first not minted again.
  await weir.stop();
  const again = await startTestWeir(t, { dataDir: weir.dataDir }, { clock });
  const extra = (over / 2n).toString();
  await payerTo(chainPublisher(again.bus), shown.address)(extra, 8201);
  const merchant = apiClient(again.url, testSecretKey);
  const deliveries = await eventually(async () => {
    const { data } = (
      await merchant.get<{ data: { eventId: string }[] }>(
        `/api/v1/webhook-endpoints/${endpointId}/deliveries?eventType=checkout_session.overpayment`,
      )
    ).body;
    return data.length >= 2 ? data : undefined;
  }, 'the second overpayment to be scheduled');
  t.is(deliveries.length, 2, 'one delivery per overpayment');
  t.true(deliveries.some((d) => d.eventId === first));
  t.is(new Set(deliveries.map((d) => d.eventId)).size, 2);
});

type Asset = {
  id: string;
  chainId: number;
  address: string;
  isEIP5827Supported: boolean;
  isPublic: boolean;
  chain: { id: number };
};
type Intent = {
  paymentMethod: { accountAddress: string; assetId: string; asset: Asset };
  transactions: { fromAddress: string; toAddress: string }[];
};

test('a session paid with a promotion code shows the reference’s discount, coupon and payment method fields, and every EVM address in its checksum, in its GET, its payment_intent.succeeded webhook, the transactions and the coupon', async (t) => {
  const { weir, api, receiver, chain } = await merchantWithReceiver(t, ['payment_intent.succeeded']);
  const coupon = (
    await api.post<{ id: string; organizationId: string }>('/api/v1/coupons', {
      name: 'Launch',
      percentOff: 10,
      promotionCodeData: { data: [{ code: 'LAUNCH' }] },
    })
  ).body;
  const created = (
    await api.post<{ id: string }>('/api/v1/checkout/sessions', { ...sessionRequest(), allowPromotionCodes: true })
  ).body;
  const shown = await reveal(weir, api, created.id);
  const applied = await apiClient(weir.url).post(`/checkout/${created.id}/promotion-code`, { code: 'LAUNCH' });
  t.is(applied.status, 200, JSON.stringify(applied.body));
  const payer = '0x00000000000000000000000000000000000abcde';
  const due = (await getSession(api, created.id)) as unknown as {
    paymentIntent: { paymentMethod: { amountDue: string } };
  };
  // The chain reports both addresses in lower case, as EVM logs carry them.
  const blockHash = randomHash();
  await chain.publish({
    type: 'transfer',
    network: 'weir-testnet',
    chainId: (await getSession(api, created.id)).addresses[0]!.asset.chainId,
    transactionHash: randomHash(),
    logIndex: 0,
    blockNumber: 8300,
    blockHash,
    from: payer,
    to: shown.address.toLowerCase(),
    asset: (() => {
      const usdc = TEST_NETWORK.assets.find((a) => a.currency === 'usdc')!;
      return { address: usdc.address, symbol: usdc.symbol, decimals: usdc.decimals };
    })(),
    amount: due.paymentIntent.paymentMethod.amountDue,
    reference: null,
    observedAt: new Date().toISOString(),
  });
  await chain.final(8300, blockHash);
  await eventually(
    async () => ((await getSession(api, created.id)).status === 'complete' ? true : undefined),
    'the session to complete',
  );

  type Read = {
    discounts: { amount: string; amountDiscount: string; couponId: string; coupon: Record<string, unknown> }[];
    amountDetails: { discountAmounts: { amount: string; couponId: string; promotionCodeId: string }[] };
    addresses: { paymentAddress: string; merchantAddress: string; asset: Asset }[];
    payments: { fromAddress: string; toAddress: string; asset: { address: string } }[];
    paymentIntent: Intent;
  };
  const session = (await api.get<Read>(`/api/v1/checkout/sessions/${created.id}`)).body;
  const [discount] = session.discounts;
  t.is(discount!.amount, discount!.amountDiscount);
  t.is(discount!.couponId, coupon.id);
  t.deepEqual(discount!.coupon, { name: 'Launch', percentOff: 10, amountOff: null, currency: null, code: 'LAUNCH' });
  t.like(session.amountDetails.discountAmounts[0], { amount: discount!.amount, couponId: coupon.id });

  const usdcAddress = session.addresses.find((a) => a.asset.id === session.paymentIntent.paymentMethod.assetId)!;
  const method = session.paymentIntent.paymentMethod;
  t.like(method.asset, { id: method.assetId, isEIP5827Supported: false, isPublic: true });
  t.is(method.asset.chain.id, usdcAddress.asset.chainId);
  // One address, one spelling: EIP-55 wherever it shows.
  const deposit = getAddress(shown.address);
  t.is(shown.address, deposit, 'the payer’s page shows it so too');
  t.is(usdcAddress.paymentAddress, deposit);
  t.is(method.accountAddress, deposit);
  t.is(usdcAddress.merchantAddress, getAddress(usdcAddress.merchantAddress));
  t.like(session.payments[0], { toAddress: deposit, fromAddress: getAddress(payer) });
  t.is(session.payments[0]!.asset.address, getAddress(session.payments[0]!.asset.address));
  t.like(session.paymentIntent.transactions[0], { toAddress: deposit, fromAddress: getAddress(payer) });

  const received = await receiver.waitFor((all) =>
    all.some((hook) => (JSON.parse(hook.body) as Hook).type === 'payment_intent.succeeded'),
  );
  const hook = received.find((h) => (JSON.parse(h.body) as Hook).type === 'payment_intent.succeeded')!.body;
  t.notThrows(() => checkWebhookBody(hook));
  const succeeded = (JSON.parse(hook) as { data: { object: Intent } }).data.object;
  t.like(succeeded.paymentMethod, { accountAddress: deposit, assetId: method.assetId });
  t.like(succeeded.paymentMethod.asset, { isEIP5827Supported: false, isPublic: true });
  t.like(succeeded.transactions[0], { toAddress: deposit, fromAddress: getAddress(payer) });

  const transactions = (
    await api.get<{ data: { toAddress: string; fromAddress: string; asset: Asset }[] }>(
      `/api/v1/transactions?checkoutSessionId=${created.id}&type=incoming`,
    )
  ).body.data;
  t.like(transactions[0], { toAddress: deposit, fromAddress: getAddress(payer) });
  t.like(transactions[0]!.asset, { isPublic: true, isEIP5827Supported: false });
  t.is(transactions[0]!.asset.chain.id, usdcAddress.asset.chainId);

  const read = (await api.get<{ promotionCodes: { organizationId: string }[] }>(`/api/v1/coupons/${coupon.id}`)).body;
  t.is(read.promotionCodes[0]!.organizationId, coupon.organizationId);
});

test('an invoice whose pay-page session expires sends invoice.payment_failed, as documented: the invoice still open, its failed attempt naming the session and why, each line with its currency', async (t) => {
  const { weir, api, receiver, clock } = await merchantWithReceiver(t, ['invoice.payment_failed']);
  const draft = await api.post<{ id: string }>('/api/v1/invoices', {
    customerId: (await api.post<{ id: string }>('/api/v1/customers', { email: 'payer@example.com' })).body.id,
    lineItems: { data: [{ priceData: { currency: 'usdc', unitAmount: '100000000', productData: { name: 'Setup' } } }] },
  });
  t.is(draft.status, 200, JSON.stringify(draft.body));
  const invoiceId = draft.body.id;
  t.is((await api.post(`/api/v1/invoices/${invoiceId}/finalize`)).status, 200);
  const page = await fetch(`${weir.url}/invoices/${invoiceId}/pay`, { redirect: 'manual' });
  const sessionId = page.headers.get('location')!.split('/').pop()!;

  // The session expires (one hour) unpaid.
  clock.advanceBy(2 * 60 * 60 * 1000);
  const received = await receiver.waitFor((all) => all.length > 0);
  t.is(received.length, 1);
  const body = received[0]!.body;
  t.notThrows(() => checkWebhookBody(body));
  const hook = JSON.parse(body) as Hook;
  t.is(hook.type, 'invoice.payment_failed');
  const invoice = hook.data.object as {
    id: string;
    status: string;
    paymentAttempts: { checkoutSessionId: string; status: string; failureReason: string | null }[];
    lineItems: { data: { currency: string }[] };
  };
  t.like(invoice, {
    id: invoiceId,
    status: 'open',
    paymentAttempts: [{ checkoutSessionId: sessionId, status: 'failed' }],
  });
  t.regex(invoice.paymentAttempts[0]!.failureReason!, /expired/);
  t.deepEqual(
    invoice.lineItems.data.map((line) => line.currency),
    ['usdc'],
  );
  const read = (await api.get<{ paymentAttempts: unknown }>(`/api/v1/invoices/${invoiceId}`)).body;
  t.deepEqual(invoice.paymentAttempts, read.paymentAttempts, 'as the API answers it');
});
