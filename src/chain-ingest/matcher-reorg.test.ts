// A transfer seen in several blocks at several heights (reorgs A→B→A with B lower than A): finals,
// coming in height order, give it up only at the greatest height it was seen at.
import test, { type ExecutionContext } from 'ava';
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
  payments: { status: string; blockNumber: number; blockHash: string }[];
};

async function setup(t: ExecutionContext) {
  const clock = createManualClock(Date.parse('2026-06-01T00:00:00Z'));
  const weir = await startTestWeir(t, {}, { clock });
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
