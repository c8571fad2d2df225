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
    await sessions.put({ ...sessionFixture({ id, status, addresses: [address(id, reference)] }), _id: id });
  }
  const references = createSolanaReferences();
  await solanaReferencesProjection(references, ['solana-devnet'], () => 1_000).load(store);
  const closedAt = Object.fromEntries(references.of('solana-devnet').map((w) => [w.checkoutSessionId, w.closedAt]));
  t.deepEqual(closedAt, {
    'cs-open': null,
    // Waits for the rest of its payment like an open one (it never expires): never forgotten.
    'cs-incomplete': null,
    'cs-complete': 1_000,
    'cs-expired': 1_000,
    'cs-canceled': 1_000,
  });
});
