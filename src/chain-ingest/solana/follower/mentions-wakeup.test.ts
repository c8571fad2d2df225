import test from 'ava';
import { generateKeyPairSigner } from '@solana/kit';
import { startTestSolana } from '../../../../test/support/solana-devnet.ts';
import type { Bus } from '../../../bus/bus.ts';
import { parseChainMessage, type ChainMessage } from '../../chain-messages.ts';
import { solanaLocalNetwork } from '../networks.ts';
import { sessionReference } from '../pay-url.ts';
import type { Log } from '../../../shared/logger.ts';
import { createSolanaJsonRpc, type SolanaJsonRpc } from './json-rpc.ts';
import type { MentionsSocketEvent } from './mentions-socket.ts';
import { createSolanaFollower } from './solana-follower.ts';
import { createSolanaReferences } from './solana-references.ts';

/** Ten minutes: no timer-driven round or idle poll happens within a test, only wake-ups. */
const NEVER = 600_000;

/**
 * A running follower of the local Solana with its `logsSubscribe` socket, polling so rarely that
 * only a notification (or a subscription's acknowledgement) can start a round. `until(check)`
 * waits for a round or socket event after which `check` holds.
 */
async function world(
  t: Parameters<typeof startTestSolana>[0],
  timing: {
    now?: () => number;
    pollIntervalMs?: number;
    maxPollIntervalMs?: number;
    socketIdlePollMs?: number;
    pageSize?: number;
    maxPages?: number;
    readClock?: () => number;
    log?: Log;
  } = {},
  /** Stands between the follower and the node (to hold or fail its calls). */
  wrapRpc: (rpc: SolanaJsonRpc) => SolanaJsonRpc = (rpc) => rpc,
) {
  const chain = await startTestSolana(t);
  const network = solanaLocalNetwork(chain.server.ledger.mints);
  const references = createSolanaReferences();
  const published: ChainMessage[] = [];
  const waiters = new Set<() => void>();
  const signal = () => {
    for (const waiter of waiters) waiter();
  };
  const until = (check: () => boolean) =>
    new Promise<void>((resolve) => {
      const waiter = () => {
        if (!check()) return;
        waiters.delete(waiter);
        resolve();
      };
      waiters.add(waiter);
      waiter();
    });
  const bus = {
    publish: async (subject: string, data: Uint8Array) => {
      published.push(parseChainMessage(subject, data));
      signal();
    },
  } as unknown as Bus;
  const events: MentionsSocketEvent[] = [];
  let roundsDone = 0;
  const readThrough: (number | null)[] = [];
  const rpc = createSolanaJsonRpc({ url: chain.server.rpcUrl });
  const follower = createSolanaFollower({
    network,
    rpc: wrapRpc(rpc),
    bus,
    references,
    pollIntervalMs: NEVER,
    maxPollIntervalMs: NEVER,
    socketIdlePollMs: NEVER,
    log: () => undefined,
    ...timing,
    wsUrl: chain.server.wsUrl,
    socketBackoffMs: { min: 10, max: 100 },
    onRound: (through) => {
      readThrough.push(through);
      roundsDone += 1;
      signal();
    },
    onSocketEvent: (event) => {
      events.push(event);
      signal();
    },
  });
  t.teardown(() => follower.stop());
  const merchant = (await generateKeyPairSigner()).address;
  const watch = (session: string, mint: string, expiresAt?: number) => {
    const reference = sessionReference({
      network: network.network,
      organizationId: 'org',
      checkoutSessionId: session,
      merchantAddress: merchant,
    });
    references.add(
      {
        network: network.network,
        paymentAddress: reference,
        merchantAddress: merchant,
        asset: { address: mint } as never,
        checkoutSessionId: session,
      },
      expiresAt,
    );
    return reference;
  };
  /** Started, subscribed, and the round the acknowledgement started is over: from here only notifications wake it. */
  const settled = async (subscriptions: number) => {
    await until(() => (follower.status().socket?.subscribed ?? 0) >= subscriptions);
    const after = events.filter((e) => e === 'subscribed').length + 1;
    await until(() => roundsDone >= after);
  };
  return {
    chain,
    network,
    references,
    follower,
    published,
    events,
    merchant,
    watch,
    until,
    settled,
    rounds: () => roundsDone,
    readThrough,
    rpc,
    signal,
  };
}

test('a payment is picked up by its logsNotification, long before the idle poll would read it', async (t) => {
  const w = await world(t);
  const usdc = w.chain.server.ledger.mints.usdc;
  const reference = w.watch('s1', usdc);
  await w.follower.start();
  await w.settled(1);
  const rounds = w.rounds();
  const payer = await w.chain.newPayer();
  const signature = await payer.payToken(usdc, w.merchant, 1_500_000n, [reference]);
  await w.until(() => w.published.length >= 1 && w.rounds() > rounds);
  t.like(w.published[0], { type: 'transfer', transactionHash: signature, amount: '1500000', reference });
  t.true((w.follower.status().socket?.notifications ?? 0) >= 1);
  // Owed its finality, the reference is also subscribed at finalized: finalizing wakes it too.
  await w.until(() => (w.follower.status().socket?.subscribed ?? 0) >= 2);
  const beforeFinal = w.rounds();
  w.chain.server.ledger.finalize();
  await w.until(() => w.published.some((m) => m.type === 'final') && w.rounds() > beforeFinal);
  t.is(w.follower.status().pending, 0);
});

test('the socket dropping is followed by a reconnection that subscribes again; forgetting a reference unsubscribes it', async (t) => {
  const w = await world(t);
  const usdc = w.chain.server.ledger.mints.usdc;
  const reference = w.watch('s2', usdc);
  await w.follower.start();
  await w.settled(1);
  w.chain.server.pubsub.dropConnections();
  await w.until(() => w.events.includes('closed'));
  await w.until(() => w.follower.status().socket?.reconnects === 1 && w.follower.status().socket?.subscribed === 1);
  await w.settled(1);
  t.is(w.chain.server.pubsub.subscriptions(), 1, 'the node holds the new subscription only');
  const payer = await w.chain.newPayer();
  const signature = await payer.payToken(usdc, w.merchant, 1_000_000n, [reference]);
  await w.until(() => w.published.length >= 1);
  t.like(w.published[0], { type: 'transfer', transactionHash: signature });

  w.chain.server.ledger.finalize();
  await w.until(() => w.published.some((m) => m.type === 'final'));
  await w.until(() => w.follower.status().pending === 0);
  const unsubscribed = () => w.events.filter((e) => e === 'unsubscribed').length;
  await w.follower.poll();
  const before = unsubscribed();
  w.references.forget(w.network.network, reference);
  await w.follower.poll();
  t.is(w.follower.status().socket?.subscribed, 0);
  await w.until(() => unsubscribed() > before);
  t.is(w.chain.server.pubsub.subscriptions(), 0);
});

test('a notification for a transaction that pays nothing valid credits nothing', async (t) => {
  const w = await world(t);
  const { usdc, usdt } = w.chain.server.ledger.mints;
  const reference = w.watch('s3', usdc);
  await w.follower.start();
  await w.settled(1);
  const payer = await w.chain.newPayer();
  // The wrong mint, then a transfer that fails on chain (more than the payer holds): both name the reference.
  await payer.payToken(usdt, w.merchant, 1_000_000n, [reference]);
  await payer.payToken(usdc, w.merchant, 10_000_000_000n, [reference], { skipPreflight: true });
  const rounds = w.rounds();
  await w.until(() => (w.follower.status().socket?.notifications ?? 0) >= 2 && w.rounds() > rounds);
  const signature = await payer.payToken(usdc, w.merchant, 1_000_000n, [reference]);
  await w.until(() => w.published.length >= 1);
  t.is(w.published.length, 1);
  t.like(w.published[0], { type: 'transfer', transactionHash: signature, amount: '1000000' });
});

test('while its subscription is live an idle reference is polled once a minute, not at its backoff', async (t) => {
  let now = 0;
  // A 10 s base interval and a 15 s cap (virtual time): polling alone would read it ~40 times in 10 minutes.
  const w = await world(t, {
    now: () => now,
    pollIntervalMs: 10_000,
    maxPollIntervalMs: 15_000,
    socketIdlePollMs: 60_000,
  });
  w.watch('s4', w.chain.server.ledger.mints.usdc);
  await w.follower.start();
  await w.settled(1);
  const before = w.rpc.counts().calls;
  for (now = 0; now <= 10 * 60_000; now += 1000) await w.follower.poll();
  const calls = w.rpc.counts().calls - before;
  t.true(calls >= 9 && calls <= 12, `${calls} getSignaturesForAddress calls in 10 minutes`);
});

test('a reference whose backlog is still read page by page is not said read through, though its subscription is live: an expiry waits for the payment in it', async (t) => {
  const w = await world(t, { pageSize: 1, maxPages: 1 });
  const usdc = w.chain.server.ledger.mints.usdc;
  const reference = w.watch('s-backlog', usdc);
  const payer = await w.chain.newPayer();
  // The payment, then more naming the reference (SOL, which it does not take), all before the first read.
  const signature = await payer.payToken(usdc, w.merchant, 1_000_000n, [reference]);
  for (let i = 0; i < 3; i++) await payer.paySol(w.merchant, 10_000_000n + BigInt(i), [reference]);
  await w.follower.start();
  await w.settled(1);
  t.is(w.published.length, 0, 'one signature a round: the payment, the oldest, is not read yet');
  t.is(w.readThrough.at(-1), null, 'read through nothing while the backlog is open');
  while (w.published.length === 0) await w.follower.poll();
  t.like(w.published[0], { type: 'transfer', transactionHash: signature });
  await w.follower.poll();
  t.not(w.readThrough.at(-1), null);
});

test('a live subscription vouches for the chain only up to a few seconds before the round: a notification on its way is waited for', async (t) => {
  let clock = 100;
  const w = await world(t, { readClock: () => clock });
  w.watch('s-slack', w.chain.server.ledger.mints.usdc);
  await w.follower.start();
  await w.settled(1);
  clock = 1_000_000;
  await w.follower.poll();
  const through = w.readThrough.at(-1);
  t.true(
    typeof through === 'number' && through < 1_000_000 && through >= 1_000_000 - 60_000,
    `read through ${through}`,
  );
});

test('a subscribed reference woken mid-round and not read since is not said read through that round: the expiry waits for its payment', async (t) => {
  let clock = 100_000;
  let held: (() => void)[] | null = null;
  let heldReference = '';
  let signal = () => {};
  const w = await world(t, { readClock: () => clock }, (rpc) => ({
    counts: () => rpc.counts(),
    async call<T>(method: string, params: unknown[]): Promise<T> {
      if (held !== null && method === 'getSignaturesForAddress' && params[0] === heldReference)
        await new Promise<void>((resolve) => {
          held?.push(resolve);
          signal();
        });
      return rpc.call<T>(method, params);
    },
  }));
  signal = w.signal;
  const usdc = w.chain.server.ledger.mints.usdc;
  const paid = w.watch('s-woken', usdc);
  await w.follower.start();
  await w.settled(1);
  // A round (at 1 000 000) held on reading another, new reference: the payment's notification comes meanwhile.
  clock = 1_000_000;
  const gate: (() => void)[] = [];
  held = gate;
  heldReference = w.watch('s-other', usdc);
  const round = w.follower.poll();
  // Its subscription's acknowledgement starts a round of the loop too, held the same way.
  await w.until(() => gate.length >= 2);
  const notified = w.follower.status().socket?.notifications ?? 0;
  const payer = await w.chain.newPayer();
  const signature = await payer.payToken(usdc, w.merchant, 1_000_000n, [paid]);
  await w.until(() => (w.follower.status().socket?.notifications ?? 0) > notified);
  held = null;
  for (const release of gate) release();
  await round;
  t.is(w.readThrough.at(-1), 100_000, 'read through only the paid reference’s last read, before the round');
  await w.until(() => w.published.length >= 1);
  t.like(w.published[0], { type: 'transfer', transactionHash: signature });
});

test('a subscribed reference whose payment the node does not return yet is not said read, and is logged naming it and the error', async (t) => {
  let clock = 100_000;
  let now = 0;
  let withheld = false;
  const lines: { message: string; fields: Record<string, unknown> | undefined }[] = [];
  const w = await world(
    t,
    { now: () => now, readClock: () => clock, log: (message, fields) => void lines.push({ message, fields }) },
    (rpc) => ({
      counts: () => rpc.counts(),
      call: <T>(method: string, params: unknown[]): Promise<T> =>
        withheld && method === 'getTransaction' ? Promise.resolve(null as T) : rpc.call<T>(method, params),
    }),
  );
  const usdc = w.chain.server.ledger.mints.usdc;
  const reference = w.watch('s-unread', usdc);
  await w.follower.start();
  await w.settled(1);
  clock = 1_000_000;
  withheld = true;
  const rounds = w.rounds();
  const payer = await w.chain.newPayer();
  const signature = await payer.payToken(usdc, w.merchant, 1_000_000n, [reference]);
  await w.until(() => w.rounds() > rounds && lines.length > 0);
  t.is(w.readThrough.at(-1), 100_000, 'read through its last complete read only');
  t.is(w.published.length, 0);
  t.like(lines[0]?.fields, { level: 'warn', event: 'solana.reference_unread', reference, failures: 1 });
  t.true(String(lines[0]?.fields?.err).includes(signature), String(lines[0]?.fields?.err));
  t.true(lines[0]?.message.includes(reference));
  // Not a line a round: the next failures are quiet until the thirtieth.
  for (let i = 0; i < 5; i++) {
    now += NEVER;
    await w.follower.poll();
  }
  t.is(lines.filter((line) => line.fields?.event === 'solana.reference_unread').length, 1);
  withheld = false;
  now += NEVER;
  await w.follower.poll();
  t.like(w.published[0], { type: 'transfer', transactionHash: signature });
  const through = w.readThrough.at(-1);
  t.true(typeof through === 'number' && through > 100_000, `read through ${through} once read`);
});

test('a notification that comes while its reference is being read keeps it due: the next round reads the payment, it is not left to the idle poll', async (t) => {
  let holdNext = false;
  const hold: { release: (() => void) | null } = { release: null };
  let signal = () => {};
  let paidReference = '';
  const w = await world(t, {}, (rpc) => ({
    counts: () => rpc.counts(),
    async call<T>(method: string, params: unknown[]): Promise<T> {
      const answer = await rpc.call<T>(method, params);
      if (holdNext && method === 'getSignaturesForAddress' && params[0] === paidReference) {
        holdNext = false;
        await new Promise<void>((resolve) => {
          hold.release = resolve;
          signal();
        });
      }
      return answer;
    },
  }));
  signal = w.signal;
  const { usdc, usdt } = w.chain.server.ledger.mints;
  const reference = w.watch('s-during', usdc);
  paidReference = reference;
  await w.follower.start();
  await w.settled(1);
  // A transfer in a mint it does not take (nothing owed, so no finality subscription to wake it
  // again) starts a round whose answer is held; the payment lands meanwhile.
  holdNext = true;
  const payer = await w.chain.newPayer();
  await payer.payToken(usdt, w.merchant, 1_000_000n, [reference]);
  await w.until(() => hold.release !== null);
  const notified = w.follower.status().socket?.notifications ?? 0;
  const second = await payer.payToken(usdc, w.merchant, 2_000_000n, [reference]);
  await w.until(() => (w.follower.status().socket?.notifications ?? 0) > notified);
  hold.release?.();
  await w.until(() => w.published.some((m) => m.type === 'transfer' && m.transactionHash === second));
  t.is(w.published.filter((m) => m.type === 'transfer').length, 1);
});

test('a payment made seconds before its session expires, its notification dropped by the provider, is read before the chain is said read past the expiry: the expiry waits for it', async (t) => {
  let clock = 100_000;
  const polled: string[] = [];
  const w = await world(t, { readClock: () => clock }, (rpc) => ({
    counts: () => rpc.counts(),
    call<T>(method: string, params: unknown[]): Promise<T> {
      if (method === 'getSignaturesForAddress') polled.push(String(params[0]));
      return rpc.call<T>(method, params);
    },
  }));
  const usdc = w.chain.server.ledger.mints.usdc;
  const expiresAt = 1_000_000;
  const paid = w.watch('s-expiring-paid', usdc, expiresAt);
  const unpaid = w.watch('s-expiring-unpaid', usdc, expiresAt);
  const later = w.watch('s-expiring-later', usdc, expiresAt + 3_600_000);
  await w.follower.start();
  // Three acknowledgements may start fewer rounds (a wake-up during a round makes one more): a round reads what they woke.
  await w.until(() => (w.follower.status().socket?.subscribed ?? 0) >= 3);
  await w.follower.poll();
  w.chain.server.pubsub.dropNotifications(true);
  clock = expiresAt - 2_000;
  const signature = await (await w.chain.newPayer()).payToken(usdc, w.merchant, 1_000_000n, [paid]);
  await w.follower.poll();
  t.true((w.readThrough.at(-1) ?? expiresAt) < expiresAt, 'not read through the expiry before it');
  t.is(w.published.length, 0, 'only the socket would have said: nothing read');
  // Past the expiry (and the notification slack): the references of the sessions that expired are read, once.
  clock = expiresAt + 10_000;
  polled.length = 0;
  await w.follower.poll();
  t.like(w.published[0], { type: 'transfer', transactionHash: signature, reference: paid });
  const through = w.readThrough.at(-1);
  t.true(typeof through === 'number' && through >= expiresAt, `read through ${through}, past the expiry`);
  t.true(polled.includes(paid) && polled.includes(unpaid), 'both expired references read');
  t.false(polled.includes(later), 'one expiring later is left to the socket');
  polled.length = 0;
  clock += 1_000;
  await w.follower.poll();
  t.false(polled.includes(unpaid), 'read past its expiry once: left to the socket again');
  t.true((w.readThrough.at(-1) ?? 0) >= expiresAt);
});
