import test from 'ava';
import type { SessionAddress } from '../../machines/checkout-session.types.ts';
import { sessionFixture } from '../../machines/checkout-session.fixture.ts';
import { createSolanaReferences } from '../chain-ingest/solana/follower/solana-references.ts';
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

test('after a restart, a partly paid (incomplete) session is still watched as open: the rest of its payment is not missed', async (t) => {
  const store = createSqliteReadStore({ path: ':memory:' });
  t.teardown(() => store.close());
  const sessions = store.collection(COLLECTIONS.checkoutSessions);
  const statuses = ['open', 'incomplete', 'complete', 'expired', 'canceled'] as const;
  for (const [i, status] of statuses.entries()) {
    const id = `cs-${status}`;
    const reference = `Ref${i}1111111111111111111111111111111111111`;
    // A closed record says when: these closed at the epoch's second second.
    const closed = { complete: 'completedAt', expired: 'expiredAt', canceled: 'canceledAt' } as const;
    const at = status in closed ? { [closed[status as keyof typeof closed]]: new Date(2_000).toISOString() } : {};
    await sessions.put({ ...sessionFixture({ id, status, addresses: [address(id, reference)], ...at }), _id: id });
  }
  const references = createSolanaReferences();
  await solanaReferencesProjection(references, ['solana-devnet'], () => 1_000_000).load(store);
  const closedAt = Object.fromEntries(references.of('solana-devnet').map((w) => [w.checkoutSessionId, w.closedAt]));
  t.deepEqual(closedAt, {
    'cs-open': null,
    // Waits for the rest of its payment like an open one (it never expires): never forgotten.
    'cs-incomplete': null,
    // From when each closed, not from the load: a restart gives none a new grace period to be polled in.
    'cs-complete': 2_000,
    'cs-expired': 2_000,
    'cs-canceled': 2_000,
  });
});

test('a session closing while Weir runs is closed from the time its closing event records', async (t) => {
  const references = createSolanaReferences();
  const projection = solanaReferencesProjection(references, ['solana-devnet'], () => 9_000_000);
  const id = 'cs-live';
  const created = { ...sessionFixture({ id, addresses: [address(id, 'Ref91111111111111111111111111111111111111')] }) };
  const event = (type: string, data: unknown, occurredAt: string) =>
    ({
      streamId: `checkout_session-${id}`,
      type,
      data,
      metadata: { occurredAt },
    }) as unknown as Parameters<typeof projection.apply>[0];
  await projection.apply(event('CheckoutSessionCreated', { session: created }, new Date(1_000).toISOString()));
  await projection.apply(
    event('CheckoutSessionExpired', { at: new Date(5_000).toISOString() }, new Date(5_000).toISOString()),
  );
  t.deepEqual(
    references.of('solana-devnet').map((w) => w.closedAt),
    [5_000],
  );
});
