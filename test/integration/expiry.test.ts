import test, { type ExecutionContext } from 'ava';
import { createManualClock } from '../../src/shared/clock.ts';
import { apiClient, eventually } from '../support/api-client.ts';
import { chainPublisher, randomHash } from '../support/chain-publisher.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';

type Session = { id: string; status: string; expiresAt: string; paymentIntent: { status: string } };

test('a session expires one hour after creation by default, and checkout_session.expired is delivered', async (t) => {
  const receiver = await startWebhookReceiver();
  t.teardown(() => receiver.close());
  const clock = createManualClock(Date.parse('2026-05-01T08:00:00Z'));
  const weir = await startTestWeir(t, {}, { clock });
  const { api } = await createMerchant(weir.url);
  await api.post('/api/v1/webhook-endpoints', {
    description: 'd',
    url: receiver.url,
    enabledEvents: { events: ['checkout_session.expired'] },
  });
  const session = (await api.post<Session>('/api/v1/checkout/sessions', sessionRequest())).body;
  t.is(session.expiresAt, '2026-05-01T09:00:00.000Z');

  clock.set(Date.parse('2026-05-01T08:59:59.999Z'));
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.is((await api.get<Session>(`/api/v1/checkout/sessions/${session.id}`)).body.status, 'open');

  clock.set(Date.parse('2026-05-01T09:00:00.000Z'));
  const expired = await eventually(async () => {
    const s = (await api.get<Session>(`/api/v1/checkout/sessions/${session.id}`)).body;
    return s.status === 'expired' ? s : undefined;
  }, 'the session to expire');
  t.is(expired.paymentIntent.status, 'canceled');
  const [hook] = await receiver.waitFor((all) => all.length === 1);
  t.is((JSON.parse(hook!.body) as { type: string }).type, 'checkout_session.expired');
});

test('the expiry timer is durable: a session whose expiry passed while Weir was down expires at start', async (t) => {
  const clock = createManualClock(Date.parse('2026-05-01T08:00:00Z'));
  const first = await startTestWeir(t, {}, { clock });
  const { api, testSecretKey } = await createMerchant(first.url);
  const session = (
    await api.post<Session>('/api/v1/checkout/sessions', { ...sessionRequest(), expiresAt: '2026-05-01T08:30:00Z' })
  ).body;
  await first.stop();

  clock.set(Date.parse('2026-05-01T10:00:00Z'));
  const second = await startTestWeir(t, { dataDir: first.dataDir }, { clock });
  const again = apiClient(second.url, testSecretKey);
  const expired = await eventually(async () => {
    const s = (await again.get<Session>(`/api/v1/checkout/sessions/${session.id}`)).body;
    return s.status === 'expired' ? s : undefined;
  }, 'the session to expire after restart');
  t.is(expired.id, session.id);
});

test('expiresAt is validated: past, too soon, too far, malformed', async (t) => {
  const clock = createManualClock(Date.parse('2026-05-01T08:00:00Z'));
  const weir = await startTestWeir(t, {}, { clock });
  const { api } = await createMerchant(weir.url);
  for (const expiresAt of ['2026-05-01T07:00:00Z', '2026-05-01T08:00:30Z', '2026-07-01T00:00:00Z', 'tomorrow']) {
    const r = await api.post<{ message: string; statusCode: number }>('/api/v1/checkout/sessions', {
      ...sessionRequest(),
      expiresAt,
    });
    t.is(r.status, 400, expiresAt);
    t.regex(r.body.message, /^expiresAt/);
  }
});

type PayableSession = Session & { url: string; addresses: { asset: { currency: string }; paymentAddress: string }[] };

/** A 3 USDC session expiring 08:30, its webhooks (completed, expired) recorded, and a USDC transfer to it detected at 08:10 in block 100. */
async function sessionWithTransferDetectedInTime(t: ExecutionContext) {
  const receiver = await startWebhookReceiver();
  t.teardown(() => receiver.close());
  const clock = createManualClock(Date.parse('2026-05-01T08:00:00Z'));
  const weir = await startTestWeir(t, {}, { clock });
  const merchant = await createMerchant(weir.url);
  await merchant.api.post('/api/v1/webhook-endpoints', {
    description: 'd',
    url: receiver.url,
    enabledEvents: { events: ['checkout_session.completed', 'checkout_session.expired'] },
  });
  const session = (
    await merchant.api.post<PayableSession>('/api/v1/checkout/sessions', {
      ...sessionRequest('150000000', 2),
      expiresAt: '2026-05-01T08:30:00Z',
    })
  ).body;
  const usdc = session.addresses.find((a) => a.asset.currency === 'usdc')!;
  clock.set(Date.parse('2026-05-01T08:10:00Z'));
  const blockHash = randomHash();
  const paid = await chainPublisher(weir.bus).transfer({
    to: usdc.paymentAddress,
    amount: '3000000',
    blockNumber: 100,
    blockHash,
  });
  await eventually(async () => {
    const s = (await merchant.api.get<Session>(`/api/v1/checkout/sessions/${session.id}`)).body;
    return s.paymentIntent.status === 'processing' ? s : undefined;
  }, 'the transfer to be detected');
  return { receiver, clock, weir, merchant, session, blockHash, paid };
}

const hookTypes = (hooks: { body: string }[]) => hooks.map((h) => (JSON.parse(h.body) as { type: string }).type);

test('a payment detected before expiresAt keeps the session open past it, through a restart, and completes it when final: no checkout_session.expired', async (t) => {
  const { receiver, clock, weir, merchant, session, blockHash } = await sessionWithTransferDetectedInTime(t);
  clock.set(Date.parse('2026-05-01T08:31:00Z'));
  await new Promise((resolve) => setTimeout(resolve, 400));
  const waiting = (await merchant.api.get<Session>(`/api/v1/checkout/sessions/${session.id}`)).body;
  t.is(waiting.status, 'open');
  t.is(waiting.paymentIntent.status, 'processing');
  const status = (await (await fetch(`${session.url}/status`)).json()) as { status: string; paymentStatus: string };
  t.like(status, { status: 'open', paymentStatus: 'unpaid' });

  // After a restart the expiry timer is tried again and again changes nothing.
  await weir.stop();
  const again = await startTestWeir(t, { dataDir: weir.dataDir }, { clock });
  const api = apiClient(again.url, merchant.testSecretKey);
  await new Promise((resolve) => setTimeout(resolve, 400));
  t.is((await api.get<Session>(`/api/v1/checkout/sessions/${session.id}`)).body.status, 'open');

  clock.set(Date.parse('2026-05-01T08:32:00Z'));
  await chainPublisher(again.bus).final(100, blockHash);
  const complete = await eventually(async () => {
    const s = (await api.get<Session & { paymentStatus: string }>(`/api/v1/checkout/sessions/${session.id}`)).body;
    return s.status === 'complete' ? s : undefined;
  }, 'the session to complete');
  t.is(complete.paymentIntent.status, 'succeeded');
  t.deepEqual(hookTypes(await receiver.waitFor((all) => all.length >= 1)), ['checkout_session.completed']);
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.deepEqual(hookTypes(receiver.received), ['checkout_session.completed']);
});

/** The session's recorded event types, from its log: what happened, with no wait for what did not. */
const sessionLog = async (weir: { eventStore: { readStream(id: string): Promise<{ type: string }[]> } }, id: string) =>
  (await weir.eventStore.readStream(`checkout_session-${id}`)).map((e) => e.type);

/** The session expires, its intent canceled, with one CheckoutSessionExpired and one checkout_session.expired. */
async function expiresOnce(
  t: ExecutionContext,
  {
    receiver,
    weir,
    merchant,
    session,
  }: Omit<Awaited<ReturnType<typeof sessionWithTransferDetectedInTime>>, 'clock' | 'blockHash' | 'paid'>,
) {
  const expired = await eventually(async () => {
    const s = (await merchant.api.get<Session>(`/api/v1/checkout/sessions/${session.id}`)).body;
    return s.status === 'expired' ? s : undefined;
  }, 'the session to expire');
  t.is(expired.paymentIntent.status, 'canceled');
  t.deepEqual(hookTypes(await receiver.waitFor((all) => all.length >= 1)), ['checkout_session.expired']);
  t.is((await sessionLog(weir, session.id)).filter((type) => type === 'CheckoutSessionExpired').length, 1);
}

test('a payment detected before expiresAt and withdrawn by a reorg after it keeps the session open until a final block at its height is another; then it expires, with one checkout_session.expired', async (t) => {
  const { receiver, clock, weir, merchant, session, blockHash } = await sessionWithTransferDetectedInTime(t);
  clock.set(Date.parse('2026-05-01T08:31:00Z'));
  await chainPublisher(weir.bus).reorg([{ number: 100, hash: blockHash }]);
  // A reorged transaction goes back to the mempool: until its height is final without it, it may be mined again.
  const withdrawn = await eventually(async () => {
    const s = (
      await merchant.api.get<Session & { payments: { status: string }[] }>(`/api/v1/checkout/sessions/${session.id}`)
    ).body;
    return s.payments[0]?.status === 'withdrawn' ? s : undefined;
  }, 'the withdrawal');
  t.is(withdrawn.status, 'open');
  t.false((await sessionLog(weir, session.id)).includes('CheckoutSessionExpired'));

  await chainPublisher(weir.bus).final(100, randomHash());
  await expiresOnce(t, { receiver, weir, merchant, session });
});

test('a payment detected before expiresAt and withdrawn after it by a reorg past finality (a Solana slot the cluster finalized without it) expires the session then: nothing is waited for', async (t) => {
  const { receiver, clock, weir, merchant, session, blockHash, paid } = await sessionWithTransferDetectedInTime(t);
  clock.set(Date.parse('2026-05-01T08:31:00Z'));
  await chainPublisher(weir.bus).publish({
    type: 'reorg',
    network: paid.network,
    chainId: paid.chainId,
    removedBlocks: [{ number: 100, hash: blockHash }],
    final: true,
    observedAt: new Date().toISOString(),
  });
  await expiresOnce(t, { receiver, weir, merchant, session });
});

for (const { how, again } of [
  {
    how: 'mined again in another block',
    again: async (chain: ReturnType<typeof chainPublisher>, paid: { transactionHash: string; to: string }) => {
      const other = randomHash();
      await chain.transfer({
        to: paid.to,
        transactionHash: paid.transactionHash,
        amount: '3000000',
        blockNumber: 101,
        blockHash: other,
      });
      await chain.final(100, randomHash());
      await chain.final(101, other);
    },
  },
  {
    how: 'its very block back (flip-back)',
    again: async (chain: ReturnType<typeof chainPublisher>, _paid: unknown, blockHash: string) => {
      await chain.final(100, blockHash);
    },
  },
]) {
  test(`a payment detected before expiresAt, withdrawn by a reorg after it and ${how}, completes the session: paid on time, never expired, not late`, async (t) => {
    const { receiver, clock, weir, merchant, session, blockHash, paid } = await sessionWithTransferDetectedInTime(t);
    clock.set(Date.parse('2026-05-01T08:31:00Z'));
    const chain = chainPublisher(weir.bus);
    await chain.reorg([{ number: 100, hash: blockHash }]);
    await eventually(async () => {
      const s = (await merchant.api.get<{ payments: { status: string }[] }>(`/api/v1/checkout/sessions/${session.id}`))
        .body;
      return s.payments[0]?.status === 'withdrawn' ? s : undefined;
    }, 'the withdrawal');
    clock.set(Date.parse('2026-05-01T08:32:00Z'));
    await again(chain, paid, blockHash);
    const complete = await eventually(async () => {
      const s = (
        await merchant.api.get<
          Session & { paymentStatus: string; paymentIntent: { transactions: { late: boolean }[] } }
        >(`/api/v1/checkout/sessions/${session.id}`)
      ).body;
      return s.status === 'complete' ? s : undefined;
    }, 'the session to complete');
    t.like(complete, { paymentStatus: 'paid', paymentIntent: { status: 'succeeded' } });
    t.deepEqual(
      complete.paymentIntent.transactions.map((x) => x.late),
      [false],
    );
    const log = await sessionLog(weir, session.id);
    t.false(log.includes('CheckoutSessionExpired'));
    t.false(log.includes('LatePaymentReceived'));
    t.deepEqual(hookTypes(await receiver.waitFor((all) => all.length >= 1)), ['checkout_session.completed']);
  });
}
