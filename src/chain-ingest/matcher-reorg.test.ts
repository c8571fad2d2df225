// A transfer seen in several blocks at several heights (reorgs A→B→A with B lower than A): finals,
// coming in height order, give it up only at the greatest height it was seen at. Given up, it is
// settled: finals send it nothing more and read it no more, and only its being mined again counts it.
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import test, { type ExecutionContext } from 'ava';
import type { WeirOverrides } from '../app/start-weir.ts';
import { COLLECTIONS, type ChainPaymentDoc } from '../projections/collections.ts';
import { createManualClock } from '../shared/clock.ts';
import { eventually } from '../../test/support/api-client.ts';
import { chainPublisher, randomHash } from '../../test/support/chain-publisher.ts';
import { createMerchant, sessionRequest, startTestWeir } from '../../test/support/weir-harness.ts';

type Session = {
  id: string;
  status: string;
  paymentStatus: string;
  amountReceived: string;
  addresses: { paymentAddress: string }[];
  paymentIntent: { status: string; transactions: { status: string; late: boolean }[] };
  payments: { status: string; blockNumber: number; blockHash: string; late: boolean }[];
};

async function setup(t: ExecutionContext, overrides: WeirOverrides = {}) {
  const clock = createManualClock(Date.parse('2026-06-01T00:00:00Z'));
  const weir = await startTestWeir(t, {}, { clock, ...overrides });
  const merchant = await createMerchant(weir.url);
  const create = async () => (await merchant.api.post<Session>('/api/v1/checkout/sessions', sessionRequest())).body;
  const session = await create();
  // A second session: a transfer to it, once detected, proves every earlier chain message was handled (in order).
  const sentinel = await create();
  const getOf = (id: string) => async () => (await merchant.api.get<Session>(`/api/v1/checkout/sessions/${id}`)).body;
  const get = getOf(session.id);
  const until = (predicate: (s: Session) => boolean, what: string) =>
    eventually(async () => {
      const s = await get();
      return predicate(s) ? s : undefined;
    }, what);
  const chain = chainPublisher(weir.bus);
  let n = 100;
  const drained = async () => {
    const h = ++n;
    await chain.transfer({
      to: sentinel.addresses[0]!.paymentAddress,
      amount: '1',
      blockNumber: h,
      blockHash: randomHash(),
    });
    await eventually(
      async () => ((await getOf(sentinel.id)()).payments.length === h - 100 ? true : undefined),
      'sentinel',
    );
  };
  const events = async () =>
    (await weir.eventStore.readStream(`checkout_session-${session.id}`)).map(
      (e) => e as unknown as { type: string; data: Record<string, unknown> },
    );
  return { weir, session, get, until, chain, to: session.addresses[0]!.paymentAddress, clock, drained, events };
}

// Paid in time in A's block 6; mined again in chain B at a LOWER height (5); chain A comes back, B's
// block 5 reorged away. A's block 5 (no transfer) is final, then A's block 6 (the transfer) is final.
for (const { how, pastExpiry } of [
  { how: 'explicit reorgs', pastExpiry: false },
  { how: 'explicit reorgs', pastExpiry: true },
  { how: 'a missed reorg', pastExpiry: false },
  { how: 'a missed reorg', pastExpiry: true },
]) {
  test(`A→B→A via ${how}, B lower than A${pastExpiry ? ', past expiresAt' : ''}: the final of A's block 5 must not give up a transfer seen in A's block 6`, async (t) => {
    const { chain, to, until, clock, events } = await setup(t);
    clock.set(Date.parse('2026-06-01T00:30:00Z'));
    const a6 = randomHash();
    const paid = { to, amount: '3000000', transactionHash: randomHash() };
    await chain.transfer({ ...paid, blockNumber: 6, blockHash: a6 });
    await until((s) => s.paymentIntent.status === 'processing', 'detection in A');
    if (how === 'explicit reorgs') {
      await chain.reorg([{ number: 6, hash: a6 }]);
      await until((s) => s.payments[0]?.status === 'withdrawn', 'withdrawn from A');
    }
    const b5 = randomHash();
    await chain.transfer({ ...paid, blockNumber: 5, blockHash: b5 });
    await until((s) => s.payments[0]?.status === 'pending' && s.payments[0]!.blockHash === b5, 'in B');
    if (pastExpiry) clock.set(Date.parse('2026-06-01T01:05:00Z'));
    await chain.reorg([{ number: 5, hash: b5 }]);
    await until((s) => s.payments[0]?.status === 'withdrawn', 'withdrawn from B (awaited back)');
    await chain.final(5, randomHash()); // A's block 5: no transfer in it
    await chain.final(6, a6); // A's block 6: the transfer
    const done = await until((s) => s.payments[0]?.status === 'confirmed', 'confirmed in A');
    const log = await events();
    t.deepEqual(
      log.filter((e) => e.type === 'PaymentWithdrawn' && e.data.paymentFailed === true).length,
      0,
      'payment_intent.payment_failed sent for a payment that is then credited',
    );
    t.false(
      log.some((e) => e.type === 'CheckoutSessionExpired'),
      'expired although paid in time',
    );
    t.like(done, { status: 'complete', paymentStatus: 'paid' });
    t.false(done.paymentIntent.transactions[0]?.late ?? true, 'counted as late');
  });
}

// Withdrawn and awaited back in B's block 5 after height 5 was final in another block (kept
// pending then: it was seen in A's block 6 too); then height 6 is final in another block.
test("awaited back, its last block's height already final in another, the final of its greater sighting's height in another block gives it up", async (t) => {
  const { chain, to, until, clock, drained, get, events } = await setup(t);
  clock.set(Date.parse('2026-06-01T00:30:00Z'));
  const a6 = randomHash();
  const paid = { to, amount: '3000000', transactionHash: randomHash() };
  await chain.transfer({ ...paid, blockNumber: 6, blockHash: a6 });
  await until((s) => s.paymentIntent.status === 'processing', 'detection in A');
  const b5 = randomHash();
  await chain.transfer({ ...paid, blockNumber: 5, blockHash: b5 }); // missed reorg
  await until((s) => s.payments[0]?.blockHash === b5, 'moved to B');
  await chain.final(5, randomHash()); // kept pending: seen at 6 too
  await drained();
  t.is((await get()).payments[0]?.status, 'pending');
  await chain.reorg([{ number: 5, hash: b5 }]);
  await until((s) => s.payments[0]?.status === 'withdrawn', 'withdrawn (awaited back)');
  clock.set(Date.parse('2026-06-01T01:05:00Z'));
  await chain.final(6, randomHash()); // neither of its blocks: gone for good
  await drained();
  const after = await get();
  const log = await events();
  t.true(
    log.some((e) => e.type === 'PaymentWithdrawn' && e.data.reason === 'not in the final block'),
    'never given up: the session waits for it forever',
  );
  t.is(after.status, 'expired', 'past expiresAt with nothing left to wait for');
});

test('finals send a withdrawn transfer a command only while it changes something, and read none whose fate is settled; one settled and mined again later counts once', async (t) => {
  const spans = new InMemorySpanExporter();
  const { weir, session, chain, to, until, clock, drained } = await setup(t, { spanExporter: spans });
  // Paid in time, each reorged away and awaited back; then each height final in another block gives it up.
  const awaited = [10, 11, 12];
  for (const height of awaited) {
    const block = randomHash();
    await chain.transfer({ to, amount: '1000000', blockNumber: height, blockHash: block });
    await chain.reorg([{ number: height, hash: block }]);
  }
  await until((s) => s.payments.length === 3 && s.payments.every((p) => p.status === 'withdrawn'), 'awaited back');
  clock.set(Date.parse('2026-06-01T02:00:00Z'));
  for (const height of awaited) await chain.final(height, randomHash());
  await until((s) => s.status === 'expired', 'given up past expiresAt: the session expires with the last');
  // Late ones: some reorged away (the session waits for none of them), some never in their final block.
  const reorged = [20, 21, 22].map((height) => ({ height, block: randomHash(), transactionHash: randomHash() }));
  for (const { height, block, transactionHash } of reorged) {
    await chain.transfer({ to, amount: '1000000', blockNumber: height, blockHash: block, transactionHash });
    await chain.reorg([{ number: height, hash: block }]);
  }
  const missed = [30, 31, 32];
  for (const height of missed)
    await chain.transfer({ to, amount: '1000000', blockNumber: height, blockHash: randomHash() });
  await until((s) => s.payments.length === 9, 'the late transfers');
  spans.reset();
  for (const height of [...reorged.map((r) => r.height), ...missed]) await chain.final(height, randomHash());
  // Every final again (a redelivery, or a recovery's): nothing left to do.
  for (const height of [...awaited, ...reorged.map((r) => r.height), ...missed])
    await chain.final(height, randomHash());
  await drained();
  await until((s) => s.payments.every((p) => p.status === 'withdrawn'), 'all withdrawn');

  const withdrawals = spans
    .getFinishedSpans()
    .filter((s) => s.attributes['weir.command'] === 'WithdrawTransfer')
    .map((s) => (s.attributes['weir.log_position'] === undefined ? 'no-op' : 'recorded'));
  // One per transfer at its height's final: the missed ones withdrawn, the reorged ones settled.
  t.deepEqual(withdrawals, Array(6).fill('recorded'), 'no WithdrawTransfer that changes nothing');
  const payments = weir.readStore.collection<ChainPaymentDoc>(COLLECTIONS.chainPayments);
  t.is(
    await payments.count({ status: 'withdrawn' }),
    0,
    'the withdrawn transfers finals read hold none whose fate is settled',
  );
  t.is(await payments.count({ checkoutSessionId: session.id }), 9, 'settled, not forgotten');

  // Mined again, in a block above every final so far: detected again and counted once, late.
  const again = { ...reorged[0]!, height: 40, block: randomHash() };
  await chain.transfer({
    to,
    amount: '1000000',
    blockNumber: again.height,
    blockHash: again.block,
    transactionHash: again.transactionHash,
  });
  await chain.final(again.height, again.block);
  const counted = await until((s) => s.payments.some((p) => p.status === 'confirmed'), 'the transfer mined again');
  t.deepEqual(
    counted.payments.filter((p) => p.status === 'confirmed').map((p) => [p.blockHash, p.late]),
    [[again.block, true]],
  );
  t.is(counted.payments.length, 9);
});

test("a settled transfer whose own block turns out final after all (a reorg deeper than the confirmations brought it back) is credited by that block's final, once", async (t) => {
  const { weir, session, chain, to, until, drained } = await setup(t);
  const block = randomHash();
  await chain.transfer({ to, amount: '1000000', blockNumber: 50, blockHash: block });
  await chain.reorg([{ number: 50, hash: block }]);
  await until((s) => s.payments[0]?.status === 'withdrawn', 'withdrawn by the reorg');
  await chain.final(50, randomHash());
  await drained();
  const payments = weir.readStore.collection<ChainPaymentDoc>(COLLECTIONS.chainPayments);
  t.is(await payments.count({ status: 'settled' }), 1, 'settled by the final of its height in another block');
  // The follower's deep-reorg path or a recovery publishes its block's final: its transfer message
  // again would be ignored (a block it was seen in), so the final alone must credit it.
  await chain.final(50, block);
  const credited = await until((s) => s.payments[0]?.status === 'confirmed', "credited by its block's final");
  t.deepEqual(
    credited.payments.map((p) => [p.status, p.blockHash]),
    [['confirmed', block]],
  );
  await chain.final(50, block);
  await drained();
  t.is(await payments.count({ checkoutSessionId: session.id, status: 'confirmed' }), 1, 'counted once');
  t.is((await until((s) => s.payments.length === 1, 'one payment')).amountReceived, credited.amountReceived);
});
