import test from 'ava';
import type { SessionAddress } from '../../machines/checkout-session.types.ts';
import { sessionFixture } from '../../machines/checkout-session.fixture.ts';
import type { SolanaJsonRpc } from '../chain-ingest/solana/follower/json-rpc.ts';
import { createSolanaFollower } from '../chain-ingest/solana/follower/solana-follower.ts';
import { createSolanaReferences, type SolanaReferences } from '../chain-ingest/solana/follower/solana-references.ts';
import { solanaDevnet } from '../chain-ingest/solana/networks.ts';
import type { Bus } from '../bus/bus.ts';
import type { RecordedEvent } from '../event-store/event-store.ts';
import { COLLECTIONS } from '../projections/collections.ts';
import { createSqliteReadStore } from '../read-store/sqlite-read-store.ts';
import { solanaReferencesProjection } from './solana-references-projection.ts';

const address = (checkoutSessionId: string, reference: string): SessionAddress => ({
  id: `addr-${checkoutSessionId}`,
  checkoutSessionId,
  network: 'solana-devnet',
  asset: {
    id: 'usdc-solana-devnet',
    name: 'USD Coin',
    symbol: 'USDC',
    currency: 'usdc',
    chainId: 103,
    address: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU',
    decimals: 6,
  },
  paymentAddress: reference,
  merchantAddress: 'GvUm7Bv3WJwhUCbx2QsCtVB9tM6Fxew1nwWGdpXo2P8q',
  gas: '0',
  gasAmount: '0',
});

const HOUR = 3600_000;
const T0 = Date.parse('2026-01-01T00:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();
/** The field a closed session's record keeps its closing event's time in. */
const CLOSED_AT = { complete: 'completedAt', expired: 'expiredAt', canceled: 'canceledAt' } as const;

/** A session's event as the log holds it, recorded at `occurredAt` on Weir's clock. */
const eventOf = (id: string, type: string, data: unknown, occurredAt: number) =>
  ({
    streamId: `checkout_session-${id}`,
    type,
    data,
    metadata: { occurredAt: iso(occurredAt) },
  }) as unknown as RecordedEvent;

/**
 * A follower of solana-devnet over `references` (its node answers nothing new), Weir's clock at
 * `weir.at`; its rounds are scheduled on `wall`, which a test clock leaves behind (the e2e's 2026-01-01
 * while the host is months later).
 */
function followerOf(references: SolanaReferences, weir: { at: number }, wall: () => number) {
  const rpc: SolanaJsonRpc = { call: async <T>() => [] as T, counts: () => ({ calls: 0, requests: 0 }) };
  const follower = createSolanaFollower({
    network: solanaDevnet,
    rpc,
    bus: {} as Bus,
    references,
    pollIntervalMs: 1_000,
    now: wall,
    readClock: () => weir.at,
    log: () => undefined,
  });
  return async () => {
    await follower.poll();
    return references
      .of('solana-devnet')
      .map((w) => w.checkoutSessionId)
      .sort();
  };
}

test('after a restart, a partly paid (incomplete) session is still watched as open: the rest of its payment is not missed', async (t) => {
  const store = createSqliteReadStore({ path: ':memory:' });
  t.teardown(() => store.close());
  const sessions = store.collection(COLLECTIONS.checkoutSessions);
  const statuses = ['open', 'incomplete', 'complete', 'expired', 'canceled'] as const;
  for (const [i, status] of statuses.entries()) {
    const id = `cs-${status}`;
    const reference = `Ref${i}1111111111111111111111111111111111111`;
    const closed = status in CLOSED_AT ? { [CLOSED_AT[status as keyof typeof CLOSED_AT]]: iso(2_000) } : {};
    await sessions.put({ ...sessionFixture({ id, status, addresses: [address(id, reference)], ...closed }), _id: id });
  }
  const references = createSolanaReferences();
  await solanaReferencesProjection(references, ['solana-devnet'], () => 1_000_000).load(store);
  const closedAt = Object.fromEntries(references.of('solana-devnet').map((w) => [w.checkoutSessionId, w.closedAt]));
  t.deepEqual(closedAt, {
    'cs-open': null,
    // Waits for the rest of its payment like an open one (it never expires): never forgotten.
    'cs-incomplete': null,
    // When each closed, as the log says, not when this start loaded it.
    'cs-complete': 2_000,
    'cs-expired': 2_000,
    'cs-canceled': 2_000,
  });
});

test('a reference closed before a restart keeps its closing time: it is polled until 24 h after it closed, not 24 h after the restart', async (t) => {
  const store = createSqliteReadStore({ path: ':memory:' });
  t.teardown(() => store.close());
  // Both expired at T0 (Weir's clock): one in the durable read store, one replayed from the log (in-memory read store).
  const stored = 'cs-stored';
  await store.collection(COLLECTIONS.checkoutSessions).put({
    ...sessionFixture({
      id: stored,
      status: 'expired',
      expiredAt: iso(T0),
      addresses: [address(stored, 'RefS1111111111111111111111111111111111111')],
    }),
    _id: stored,
  });
  const replayed = 'cs-replayed';
  const created = sessionFixture({
    id: replayed,
    addresses: [address(replayed, 'RefR1111111111111111111111111111111111111')],
  });
  // Weir restarts 23 h later.
  const weir = { at: T0 + 23 * HOUR };
  const references = createSolanaReferences();
  const projection = solanaReferencesProjection(references, ['solana-devnet'], () => weir.at);
  await projection.load(store);
  await projection.apply(eventOf(replayed, 'CheckoutSessionCreated', { session: created }, T0 - HOUR), store);
  await projection.apply(eventOf(replayed, 'CheckoutSessionExpired', { at: iso(T0) }, T0), store);
  // In production Weir's clock is the host's.
  const poll = followerOf(references, weir, () => weir.at);
  t.deepEqual(await poll(), [replayed, stored], 'within 24 h of closing: still polled');
  weir.at = T0 + 24 * HOUR + 1;
  t.deepEqual(await poll(), [], '24 h after closing (1 h after the restart): forgotten');
});

test("a reference closed an hour ago on Weir's clock is still polled, whatever the host clock the rounds are scheduled on", async (t) => {
  const store = createSqliteReadStore({ path: ':memory:' });
  t.teardown(() => store.close());
  const id = 'cs-late';
  const created = sessionFixture({ id, addresses: [address(id, 'RefL1111111111111111111111111111111111111')] });
  // Weir's (test) clock was moved 25 h to expire the session; the host's is months ahead of it.
  const weir = { at: T0 };
  const references = createSolanaReferences();
  const projection = solanaReferencesProjection(references, ['solana-devnet'], () => weir.at);
  await projection.apply(eventOf(id, 'CheckoutSessionCreated', { session: created }, T0), store);
  weir.at = T0 + 25 * HOUR;
  await projection.apply(eventOf(id, 'CheckoutSessionExpired', { at: iso(weir.at) }, weir.at), store);
  weir.at += HOUR;
  const poll = followerOf(references, weir, () => Date.parse('2026-11-30T00:00:00Z'));
  t.deepEqual(await poll(), [id], 'a late payment to it is still seen');
  weir.at = T0 + 25 * HOUR + 24 * HOUR + 1;
  t.deepEqual(await poll(), [], 'forgotten 24 h after it closed');
});

test('at start, a reference closed more than 24 h ago is not added (loaded or replayed): the first round would only drop it', async (t) => {
  const store = createSqliteReadStore({ path: ':memory:' });
  t.teardown(() => store.close());
  // Weir starts 25 h after T0; one session expired at T0 (stored), one at T0 (replayed), one an hour ago (stored).
  const weir = { at: T0 + 25 * HOUR };
  const sessions = store.collection(COLLECTIONS.checkoutSessions);
  for (const [id, expiredAt, reference] of [
    ['cs-old', T0, 'RefO1111111111111111111111111111111111111'],
    ['cs-recent', weir.at - HOUR, 'RefN1111111111111111111111111111111111111'],
  ] as const)
    await sessions.put({
      ...sessionFixture({ id, status: 'expired', expiredAt: iso(expiredAt), addresses: [address(id, reference)] }),
      _id: id,
    });
  const replayed = 'cs-replayed-old';
  const created = sessionFixture({
    id: replayed,
    addresses: [address(replayed, 'RefP1111111111111111111111111111111111111')],
  });
  const references = createSolanaReferences();
  const projection = solanaReferencesProjection(references, ['solana-devnet'], () => weir.at);
  await projection.load(store);
  await projection.apply(eventOf(replayed, 'CheckoutSessionCreated', { session: created }, T0 - HOUR), store);
  await projection.apply(eventOf(replayed, 'CheckoutSessionExpired', { at: iso(T0) }, T0), store);
  const watched = () =>
    references
      .of('solana-devnet')
      .map((w) => w.checkoutSessionId)
      .sort();
  t.deepEqual(watched(), ['cs-recent'], 'only the one within its grace is watched, before any round');
  t.deepEqual(await followerOf(references, weir, () => weir.at)(), watched(), 'the first round drops nothing more');
});

test("a session's references carry its expiresAt, replayed or loaded: the follower reads them at the expiry, not on a socket's silence", async (t) => {
  const store = createSqliteReadStore({ path: ':memory:' });
  t.teardown(() => store.close());
  const stored = 'cs-stored-open';
  await store.collection(COLLECTIONS.checkoutSessions).put({
    ...sessionFixture({
      id: stored,
      expiresAt: iso(T0 + HOUR),
      addresses: [address(stored, 'RefX1111111111111111111111111111111111111')],
    }),
    _id: stored,
  });
  const replayed = 'cs-replayed-open';
  const created = sessionFixture({
    id: replayed,
    expiresAt: iso(T0 + 2 * HOUR),
    addresses: [address(replayed, 'RefY1111111111111111111111111111111111111')],
  });
  const references = createSolanaReferences();
  const projection = solanaReferencesProjection(references, ['solana-devnet'], () => T0);
  await projection.load(store);
  await projection.apply(eventOf(replayed, 'CheckoutSessionCreated', { session: created }, T0), store);
  t.deepEqual(Object.fromEntries(references.of('solana-devnet').map((w) => [w.checkoutSessionId, w.expiresAt])), {
    [stored]: T0 + HOUR,
    [replayed]: T0 + 2 * HOUR,
  });
});
