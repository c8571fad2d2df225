import test from 'ava';
import type { SessionAddress } from '../../../../machines/checkout-session.types.ts';
import { CLOSED_GRACE_MS, createSolanaReferences } from './solana-references.ts';

const added = (checkoutSessionId: string, reference: string) => ({
  checkoutSessionId,
  network: 'solana-devnet',
  paymentAddress: reference,
  merchantAddress: 'GvUm7Bv3WJwhUCbx2QsCtVB9tM6Fxew1nwWGdpXo2P8q',
  asset: { address: 'native' } as SessionAddress['asset'],
});

test('a closed reference is kept through its grace and forgotten at close when it closed longer ago (one rule)', (t) => {
  const references = createSolanaReferences();
  references.add(added('cs-edge', 'RefE1111111111111111111111111111111111111'));
  references.add(added('cs-past', 'RefP1111111111111111111111111111111111111'));
  const now = 100 * CLOSED_GRACE_MS;
  references.close('cs-edge', now - CLOSED_GRACE_MS, now);
  references.close('cs-past', now - CLOSED_GRACE_MS - 1, now);
  const [edge] = references.of('solana-devnet');
  t.deepEqual(
    references.of('solana-devnet').map((w) => w.checkoutSessionId),
    ['cs-edge'],
    'closed exactly the grace ago: still polled',
  );
  t.false(references.pastGrace(edge!, now));
  t.true(references.pastGrace(edge!, now + 1), 'a round a moment later drops it, by the same rule');
  t.false(
    references.pastGrace({ closedAt: null }, Number.MAX_SAFE_INTEGER),
    'an open reference is never past its grace',
  );
});
