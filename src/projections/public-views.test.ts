import test from 'ava';
import { sessionFixture } from '../../machines/checkout-session.fixture.ts';
import { publicCheckoutSession } from './public-views.ts';

test('the public session leaves out what is the log’s and the operator’s: reconciliation credits, sweep broadcasts and drops', (t) => {
  const session = {
    ...sessionFixture(),
    _id: 'x',
    _revision: 3,
    reconciledTransfers: ['t'],
    sweepsBroadcast: [{ transactionHash: '0x1' }],
    sweepsDropped: ['0x2'],
  } as unknown as Parameters<typeof publicCheckoutSession>[0];
  const shown = publicCheckoutSession(session) as Record<string, unknown>;
  for (const key of ['_id', '_revision', 'environment', 'reconciledTransfers', 'sweepsBroadcast', 'sweepsDropped'])
    t.false(key in shown, key);
  t.is(shown.livemode, false);
  t.is(shown.id, session.id);
});
