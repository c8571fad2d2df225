import test, { type ExecutionContext } from 'ava';
import { createManualClock } from '../shared/clock.ts';
import { encodeChainMessage } from './chain-messages.ts';
import { TEST_NETWORK } from './test-rail.ts';
import { apiClient, eventually } from '../../test/support/api-client.ts';
import { chainPublisher, randomHash } from '../../test/support/chain-publisher.ts';
import { startWebhookReceiver } from '../../test/support/webhook-receiver.ts';
import { createMerchant, sessionRequest, startTestWeir } from '../../test/support/weir-harness.ts';

type Session = {
  id: string;
  status: string;
  paymentStatus: string;
  amountReceived: string;
  amountOverpaid: string;
  addresses: { paymentAddress: string; asset: { id: string; currency: string } }[];
  paymentIntent: { status: string; transactions: { status: string; late: boolean }[] };
  payments: { status: string; blockNumber: number; blockHash: string; transactionHash: string }[];
};

async function setup(
  t: ExecutionContext,
  clock = createManualClock(Date.parse('2026-06-01T00:00:00Z')),
  request: object = sessionRequest(),
) {
  const weir = await startTestWeir(t, {}, { clock });
  const merchant = await createMerchant(weir.url);
  const session = (await merchant.api.post<Session>('/api/v1/checkout/sessions', request)).body;
  const get = async () => (await merchant.api.get<Session>(`/api/v1/checkout/sessions/${session.id}`)).body;
  const until = (predicate: (s: Session) => boolean, what: string) =>
    eventually(async () => {
      const s = await get();
      return predicate(s) ? s : undefined;
    }, what);
  return {
    weir,
    merchant,
    session,
    get,
    until,
    chain: chainPublisher(weir.bus),
    to: session.addresses[0]!.paymentAddress,
    clock,
  };
}

test('less than due leaves the session incomplete; a second transfer covering the rest completes it', async (t) => {
  const { chain, to, until } = await setup(t);
  const b1 = randomHash();
  await chain.transfer({ to, amount: '1000000', blockNumber: 1, blockHash: b1 });
  await chain.final(1, b1);
  const partial = await until((s) => s.status === 'incomplete', 'incomplete');
  t.is(partial.amountReceived, '100000000');
  t.is(partial.paymentStatus, 'unpaid');
  const b2 = randomHash();
  await chain.transfer({ to, amount: '2000000', blockNumber: 2, blockHash: b2 });
  await chain.final(2, b2);
  const done = await until((s) => s.status === 'complete', 'complete');
  t.is(done.amountReceived, '300000000');
  t.is(done.amountOverpaid, '0');
});

test('the merchant can accept a partial payment as is', async (t) => {
  const { chain, to, until, merchant, session } = await setup(t);
  const b = randomHash();
  await chain.transfer({ to, amount: '500000', blockNumber: 1, blockHash: b });
  await chain.final(1, b);
  await until((s) => s.status === 'incomplete', 'incomplete');
  const accepted = await merchant.api.post<Session>(
    `/api/v1/checkout/sessions/${session.id}/complete-partial-checkout-session`,
  );
  t.is(accepted.status, 200);
  t.is(accepted.body.status, 'complete');
  t.is(accepted.body.paymentStatus, 'paid');
  t.is(accepted.body.amountReceived, '50000000');
  const again = await merchant.api.post<{ statusCode: number; message: string }>(
    `/api/v1/checkout/sessions/${session.id}/complete-partial-checkout-session`,
  );
  t.is(again.status, 400);
  t.regex(again.body.message, /complete/);
});

test('more than due completes the session and records the overpaid amount', async (t) => {
  const { chain, to, until } = await setup(t);
  const b = randomHash();
  await chain.transfer({ to, amount: '3500000', blockNumber: 1, blockHash: b });
  await chain.final(1, b);
  const done = await until((s) => s.status === 'complete', 'complete');
  t.is(done.amountOverpaid, '50000000');
});

test('a DAI transfer 1 wei short leaves the session incomplete and its payer is asked for that 1 wei, which completes it with nothing over', async (t) => {
  const dai = {
    ...sessionRequest(),
    lineItems: {
      data: [{ priceData: { currency: 'dai', unitAmount: '13993', productData: { name: 'A sticker' } }, quantity: 1 }],
    },
  };
  const { weir, chain, to, until, session } = await setup(t, undefined, dai);
  // 0.00013993 DAI is 139930000000000 wei (18 decimals).
  const b1 = randomHash();
  await chain.transfer({ to, amount: '139929999999999', asset: 'dai', blockNumber: 1, blockHash: b1 });
  await chain.final(1, b1);
  const short = await until((s) => s.status === 'incomplete', 'incomplete');
  t.is(short.amountReceived, '13992');
  const revealed = await apiClient(weir.url).post<{ amountDueRaw: string; paymentUri: string }>(
    `/checkout/${session.id}/payment-method`,
    { assetId: session.addresses[0]!.asset.id },
  );
  t.is(revealed.status, 200);
  t.is(revealed.body.amountDueRaw, '1');
  t.regex(revealed.body.paymentUri, /uint256=1$/);
  const b2 = randomHash();
  await chain.transfer({ to, amount: revealed.body.amountDueRaw, asset: 'dai', blockNumber: 2, blockHash: b2 });
  await chain.final(2, b2);
  const done = await until((s) => s.status === 'complete', 'complete');
  t.like(done, { paymentStatus: 'paid', amountReceived: '13993', amountOverpaid: '0' });
});

test('a reorg that removes the paying block before finality leaves the session unpaid; a later real payment completes it', async (t) => {
  const { chain, to, until, get } = await setup(t);
  const orphan = randomHash();
  await chain.transfer({ to, amount: '3000000', blockNumber: 5, blockHash: orphan });
  await until((s) => s.paymentIntent.status === 'processing', 'detection');
  await chain.reorg([{ number: 5, hash: orphan }]);
  const unwound = await until((s) => s.payments[0]?.status === 'withdrawn', 'withdrawal');
  t.is(unwound.status, 'open');
  t.is(unwound.paymentStatus, 'unpaid');
  // It may be mined again: the intent keeps processing while the session waits for it.
  t.is(unwound.paymentIntent.status, 'processing');
  t.deepEqual(unwound.paymentIntent.transactions, []);
  const canonical = randomHash();
  await chain.transfer({ to, amount: '3000000', blockNumber: 5, blockHash: canonical, transactionHash: randomHash() });
  // The final of another block at that height credits the withdrawn transfer nothing.
  await chain.final(5, canonical);
  const done = await until((s) => s.status === 'complete', 'complete');
  t.is(done.amountReceived, '300000000');
  t.is((await get()).payments.filter((p) => p.status === 'confirmed').length, 1);
});

test('a block reorged away and then back (EVM flip-back): its final credits the withdrawn transfer once, though its message again is dropped as a duplicate', async (t) => {
  const { weir, chain, to, until } = await setup(t);
  const block = randomHash();
  const paid = { to, amount: '3000000', blockNumber: 5, blockHash: block, transactionHash: randomHash() };
  const published = await chain.transfer(paid);
  await until((s) => s.paymentIntent.status === 'processing', 'detection');
  await chain.reorg([{ number: 5, hash: block }]);
  await until((s) => s.payments[0]?.status === 'withdrawn', 'withdrawal');
  // The chain returns to the block: the follower publishes the transfer again (the same message
  // id, dropped by the bus within its window; ignored by the session past it), then its final.
  await chain.transfer(paid);
  await chain.final(5, block);
  const done = await until((s) => s.status === 'complete', 'complete');
  t.like(done, { paymentStatus: 'paid', amountReceived: '300000000', amountOverpaid: '0' });
  // The same final again (published anew, under another message id) counts nothing twice; a
  // later payment, handled after it in the network's order, shows when it was.
  const again = encodeChainMessage({
    type: 'final',
    network: published.network,
    chainId: published.chainId,
    blockNumber: 5,
    blockHash: block,
    observedAt: new Date().toISOString(),
  });
  await weir.bus.publish(again.subject, again.data, { messageId: `${again.messageId}:again` });
  const later = randomHash();
  await chain.transfer({ to, amount: '1000000', blockNumber: 6, blockHash: later });
  await chain.final(6, later);
  const after = await until(
    (s) => s.payments.length === 2 && s.payments[1]!.status === 'confirmed',
    'the later payment',
  );
  t.deepEqual(
    after.payments.map((p) => p.status),
    ['confirmed', 'confirmed'],
  );
  t.like(after, { amountReceived: '400000000', amountOverpaid: '100000000' });
});

for (const { where, height } of [
  { where: 'at the same height', height: 5 },
  { where: 'one block higher', height: 6 },
]) {
  test(`a reorg A→B→A, the transfer mined again in chain B ${where}: the final of its first block credits it once, though its message again is dropped as a duplicate`, async (t) => {
    const { chain, to, until, get } = await setup(t);
    const a5 = randomHash();
    const paid = { to, amount: '3000000', blockNumber: 5, blockHash: a5, transactionHash: randomHash() };
    await chain.transfer(paid);
    await until((s) => s.paymentIntent.status === 'processing', 'detection');
    // Chain B: the transaction goes back to the mempool and is mined again, in B's block at `height`.
    await chain.reorg([{ number: 5, hash: a5 }]);
    await until((s) => s.payments[0]?.status === 'withdrawn', 'the withdrawal');
    const b = [randomHash(), randomHash()];
    await chain.transfer({ ...paid, blockNumber: height, blockHash: b[height - 5]! });
    await until((s) => s.payments[0]?.status === 'pending', 'the detection in chain B');
    // Chain A comes back, its block 5 the very same: B's blocks are reorged away, A's message again is a duplicate.
    await chain.reorg([5, 6].map((number) => ({ number, hash: b[number - 5]! })));
    await until((s) => s.payments[0]?.status === 'withdrawn', 'the withdrawal from chain B');
    await chain.transfer(paid);
    await chain.final(5, a5);
    await chain.final(6, randomHash());
    const done = await until((s) => s.status === 'complete', 'complete');
    t.like(done, { paymentStatus: 'paid', amountReceived: '300000000', amountOverpaid: '0' });
    const payments = (await get()).payments;
    t.deepEqual(
      payments.map((p) => p.status),
      ['confirmed'],
    );
    t.false('seenIn' in payments[0]!, 'the blocks it was seen in are the matcher’s, not the API’s');
  });
}

test('a reorg A→B→A past expiresAt: paid in time in A, mined again in B after expiresAt and reorged away with it, the final of A completes the session on time, never expired, not late', async (t) => {
  const clock = createManualClock(Date.parse('2026-06-01T00:00:00Z'));
  const { chain, to, until } = await setup(t, clock);
  clock.set(Date.parse('2026-06-01T00:30:00Z'));
  const a5 = randomHash();
  const paid = { to, amount: '3000000', blockNumber: 5, blockHash: a5, transactionHash: randomHash() };
  await chain.transfer(paid);
  await until((s) => s.paymentIntent.status === 'processing', 'detection in time');
  clock.set(Date.parse('2026-06-01T01:00:00Z'));
  await chain.reorg([{ number: 5, hash: a5 }]);
  await until((s) => s.payments[0]?.status === 'withdrawn', 'the withdrawal from chain A');
  const b5 = randomHash();
  await chain.transfer({ ...paid, blockHash: b5 });
  await until((s) => s.payments[0]?.status === 'pending', 'the detection in chain B, past expiresAt');
  // B is reorged away past expiresAt: the payment was first detected in time, so the session still waits.
  clock.set(Date.parse('2026-06-01T01:05:00Z'));
  await chain.reorg([{ number: 5, hash: b5 }]);
  await until((s) => s.payments[0]?.status === 'withdrawn', 'the withdrawal from chain B');
  await chain.transfer(paid);
  await chain.final(5, a5);
  const done = await until((s) => s.payments[0]?.status === 'confirmed', 'the final of chain A');
  t.like(done, { status: 'complete', paymentStatus: 'paid', amountReceived: '300000000' });
  t.false(done.paymentIntent.transactions[0]!.late);
});

test('a reorg that takes away the only payment sends payment_intent.payment_failed once its height is final in another block, not while the transfer may be mined again: the intent needing a payment again, and why', async (t) => {
  const receiver = await startWebhookReceiver();
  t.teardown(() => receiver.close());
  const { chain, to, until, get, merchant, session } = await setup(t);
  const endpoint = await merchant.api.post<{ id: string }>('/api/v1/webhook-endpoints', {
    description: 'failures',
    url: receiver.url,
    enabledEvents: { events: ['payment_intent.payment_failed'] },
  });
  const orphan = randomHash();
  const transfer = await chain.transfer({ to, amount: '3000000', blockNumber: 5, blockHash: orphan });
  await until((s) => s.paymentIntent.status === 'processing', 'detection');
  await chain.reorg([{ number: 5, hash: orphan }]);
  await until((s) => s.payments[0]?.status === 'withdrawn', 'the withdrawal');
  // Its height final in another block: the transfer is gone, the session no longer waits for it.
  await chain.final(5, randomHash());
  const [hook] = await receiver.waitFor((all) => all.length >= 1);
  const body = JSON.parse(hook!.body) as { type: string; object: string; data: { object: Record<string, unknown> } };
  t.is(body.type, 'payment_intent.payment_failed');
  t.is(body.object, 'paymentIntent');
  t.like(body.data.object, {
    status: 'requires_payment_method',
    checkoutSessionId: session.id,
    amountReceived: '0',
    transactions: [],
    lastPaymentError: {
      type: 'chain_error',
      code: 'payment_withdrawn',
      transactionHash: transfer.transactionHash,
      network: transfer.network,
      blockNumber: 5,
      message:
        'the transfer the payment intent waited for was withdrawn (not in the final block); it needs a payment again',
    },
  });

  // Two more transfers reorged away, each awaited back, then the first given up while the second
  // is still awaited: none fails the intent. The second given up leaves nothing to wait for: that
  // one fails it. Deliveries are listed in log order, so once its delivery is listed, one for any
  // earlier withdrawal would be listed too.
  const b6 = randomHash();
  await chain.transfer({ to, amount: '1000000', blockNumber: 6, blockHash: b6 });
  const b7 = randomHash();
  await chain.transfer({ to, amount: '2000000', blockNumber: 7, blockHash: b7 });
  await until((s) => s.payments.length === 3, 'two more detections');
  await chain.reorg([
    { number: 6, hash: b6 },
    { number: 7, hash: b7 },
  ]);
  await until((s) => s.payments.every((p) => p.status === 'withdrawn'), 'the withdrawals');
  t.is((await get()).paymentIntent.status, 'processing');
  await chain.final(6, randomHash());
  await chain.final(7, randomHash());
  type Failed = { id: string; data: { object: { lastPaymentError: { blockNumber: number } } } };
  const hooks = () => receiver.received.map((r) => JSON.parse(r.body) as Failed);
  await receiver.waitFor(() => hooks().some((h) => h.data.object.lastPaymentError.blockNumber === 7));
  const third = hooks().find((h) => h.data.object.lastPaymentError.blockNumber === 7)!;
  const deliveries = await eventually(async () => {
    const { data } = (
      await merchant.api.get<{ data: { eventId: string }[] }>(
        `/api/v1/webhook-endpoints/${endpoint.body.id}/deliveries`,
      )
    ).body;
    return data.some((d) => d.eventId === third.id) ? data : undefined;
  }, 'the third withdrawal’s delivery listed');
  t.is(deliveries.length, 2, 'no withdrawal failed the intent while a transfer was awaited back');
});

// A reorg the follower missed: the pending transfer is delivered again in another block with no
// reorg message before it. `a` and `b` are its two blocks' heights; `canonical` the one final.
for (const { where, a, b, canonical } of [
  { where: 'at the same height, the later block final', a: 5, b: 5, canonical: 'b' },
  { where: 'one block higher, the later block final', a: 5, b: 6, canonical: 'b' },
  { where: 'one block lower, the later block final', a: 6, b: 5, canonical: 'b' },
  { where: 'one block higher, the first block final after all', a: 5, b: 6, canonical: 'a' },
  { where: 'one block lower, the first block final after all', a: 6, b: 5, canonical: 'a' },
] as const) {
  test(`a missed reorg, the transfer delivered again in another block ${where}: the final of that block confirms it, the other's final withdraws nothing`, async (t) => {
    const { weir, chain, to, until, session } = await setup(t);
    const blocks = { a: { number: a, hash: randomHash() }, b: { number: b, hash: randomHash() } };
    const paid = { to, amount: '3000000', transactionHash: randomHash() };
    await chain.transfer({ ...paid, blockNumber: a, blockHash: blocks.a.hash });
    await until((s) => s.payments[0]?.blockHash === blocks.a.hash, 'the detection in the first block');
    await chain.transfer({ ...paid, blockNumber: b, blockHash: blocks.b.hash });
    await until((s) => s.payments[0]?.blockHash === blocks.b.hash, 'the transfer in the later block');
    // The finals, in height order: the block at each height is the canonical one, else another.
    const final = blocks[canonical];
    for (const height of [...new Set([a, b])].sort((x, y) => x - y))
      await chain.final(height, height === final.number ? final.hash : randomHash());
    const done = await until((s) => s.payments[0]?.status === 'confirmed', 'the confirmation');
    t.like(done, { status: 'complete', paymentStatus: 'paid', amountReceived: '300000000', amountOverpaid: '0' });
    t.like(done.payments[0], { blockNumber: final.number, blockHash: final.hash });
    t.is(done.payments.length, 1);
    const types = (await weir.eventStore.readStream(`checkout_session-${session.id}`)).map((e) => e.type);
    t.false(types.includes('PaymentWithdrawn'), 'never withdrawn on the way');
  });
}

test('a final or a reorg naming one transaction (Solana: finality per signature) settles its transfers only, not the rest of the block', async (t) => {
  const { chain, to, until } = await setup(t);
  const block = { number: 7, hash: randomHash() };
  const [kept, failed] = [randomHash(), randomHash()];
  for (const [transactionHash, amount] of [
    [kept, '1000000'],
    [failed, '500000'],
  ] as const)
    await chain.transfer({ to, amount, blockNumber: block.number, blockHash: block.hash, transactionHash });
  await until((s) => s.payments.length === 2, 'both detected');
  const of = { network: TEST_NETWORK.network, chainId: TEST_NETWORK.chainId, observedAt: new Date().toISOString() };
  const statuses = (s: Session) => Object.fromEntries(s.payments.map((p) => [p.transactionHash, p.status]));
  await chain.publish({ type: 'reorg', ...of, removedBlocks: [block], final: true, transactionHash: failed });
  const withdrawn = await until((s) => s.payments.some((p) => p.status === 'withdrawn'), 'one withdrawn');
  t.deepEqual(statuses(withdrawn), { [kept]: 'pending', [failed]: 'withdrawn' });
  await chain.publish({
    type: 'final',
    ...of,
    blockNumber: block.number,
    blockHash: block.hash,
    transactionHash: kept,
  });
  const final = await until((s) => s.payments.some((p) => p.status === 'confirmed'), 'one confirmed');
  t.deepEqual(statuses(final), { [kept]: 'confirmed', [failed]: 'withdrawn' }, 'the withdrawn one not credited again');
});

test("a final block with another hash than the transfer's withdraws the transfer", async (t) => {
  const { chain, to, until } = await setup(t);
  await chain.transfer({ to, amount: '3000000', blockNumber: 9, blockHash: randomHash() });
  await until((s) => s.paymentIntent.status === 'processing', 'detection');
  await chain.final(9, randomHash());
  const s = await until((x) => x.payments[0]?.status === 'withdrawn', 'withdrawal');
  t.is(s.status, 'open');
});

test('a payment after expiry is recorded, not lost, and reported by a checkout_session.late_payment webhook', async (t) => {
  const receiver = await startWebhookReceiver();
  t.teardown(() => receiver.close());
  const clock = createManualClock(Date.parse('2026-06-01T00:00:00Z'));
  const { chain, to, until, merchant } = await setup(t, clock);
  await merchant.api.post('/api/v1/webhook-endpoints', {
    description: 'late',
    url: receiver.url,
    enabledEvents: { events: ['checkout_session.late_payment', 'checkout_session.expired'] },
  });
  clock.set(Date.parse('2026-06-01T01:00:00Z'));
  await until((s) => s.status === 'expired', 'expiry');
  const b = randomHash();
  await chain.transfer({ to, amount: '3000000', blockNumber: 3, blockHash: b });
  await chain.final(3, b);
  const late = await until((s) => s.amountReceived === '300000000', 'the late payment to be recorded');
  t.is(late.status, 'expired');
  t.true(late.paymentIntent.transactions[0]!.late);
  const hooks = await receiver.waitFor((all) => all.length >= 2);
  t.deepEqual(hooks.map((h) => (JSON.parse(h.body) as { type: string }).type).sort(), [
    'checkout_session.expired',
    'checkout_session.late_payment',
  ]);
});

test('a transfer of an asset the session does not accept, to an unknown address, or a malformed message credits nothing and blocks nothing', async (t) => {
  const { weir, chain, to, until, get } = await setup(t);
  const b = randomHash();
  await chain.transfer({ to, amount: '3000000000000000000', asset: 'dai', blockNumber: 1, blockHash: b });
  await chain.transfer({
    to: '0x000000000000000000000000000000000000dead',
    amount: '3000000',
    blockNumber: 1,
    blockHash: b,
  });
  await weir.bus.publish('chain.weir-testnet.transfer', Buffer.from('{"type":"transfer","network":"weir-testnet"}'));
  await weir.bus.publish('chain.weir-testnet.transfer', Buffer.from('not json'));
  await chain.transfer({ to, amount: '3000000', blockNumber: 2, blockHash: b });
  await chain.final(2, b);
  const done = await until((s) => s.status === 'complete', 'the valid payment behind the bad messages');
  t.is(done.amountReceived, '300000000');
  t.is((await get()).payments.length, 1);
});
