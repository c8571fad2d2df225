import test from 'ava';
import { COLLECTIONS } from '../projections/collections.ts';
import { createSqliteReadStore } from '../read-store/sqlite-read-store.ts';
import { createWatchedAddresses } from '../chain-ingest/watched-addresses.ts';
import { watchedAddressesProjection } from './payment-intents.ts';

test('load reads every stored deposit address, page after page', async (t) => {
  const store = createSqliteReadStore({ path: ':memory:' });
  t.teardown(() => store.close());
  const addresses = store.collection(COLLECTIONS.depositAddresses);
  const count = 12_345;
  for (let i = 0; i < count; i++) {
    const address = `0x${i.toString(16).padStart(40, '0')}`;
    await addresses.put({
      _id: `dep-${i}`,
      network: i % 3 ? 'base' : 'polygon',
      address,
      checkoutSessionId: `cs-${i}`,
    });
  }
  const watched = createWatchedAddresses();
  await watchedAddressesProjection(watched).load(store);
  t.is(watched.size('base') + watched.size('polygon'), count);
  t.true(watched.has('polygon', `0x${(count - 3).toString(16).padStart(40, '0')}`));
});
