import test from 'ava';
import { sessionFixture } from '../../../machines/checkout-session.fixture.ts';
import type { CheckoutSessionDoc } from '../../projections/collections.ts';
import { createEmbeddedReadStore } from '../../read-store/embedded-read-store.ts';
import type { Collection, Filter, FindOptions } from '../../read-store/read-store.ts';
import { EXPORT_BATCH, sessionRows } from './checkout-session-export.ts';

test('an export reads the store a batch at a time and writes every session once, newest first', async (t) => {
  const store = createEmbeddedReadStore({ writes: 'trusted' });
  const stored = store.collection<CheckoutSessionDoc>('checkout_sessions');
  const total = EXPORT_BATCH * 2 + 7;
  for (let i = 0; i < total; i++) {
    const id = `cs_${String(i).padStart(5, '0')}`;
    // Pairs share a creation time, so the cursor must also order by id.
    const createdAt = new Date(Date.UTC(2026, 0, 1) + Math.floor(i / 2) * 1000).toISOString();
    await stored.put({ ...sessionFixture({ id, createdAt }), _id: id });
  }
  const limits: (number | undefined)[] = [];
  const counting: Collection<CheckoutSessionDoc> = {
    ...stored,
    find: (filter: Filter, options?: FindOptions) => {
      limits.push(options?.limit);
      return stored.find(filter, options);
    },
  };
  const lines: string[] = [];
  for await (const line of sessionRows(counting, { organizationId: sessionFixture().organizationId })) lines.push(line);
  t.true(lines[0]!.startsWith('id,createdAt,status,'));
  const ids = lines.slice(1).map((line) => line.split(',')[0]!);
  t.is(ids.length, total);
  t.is(new Set(ids).size, total);
  t.deepEqual(limits, [EXPORT_BATCH, EXPORT_BATCH, EXPORT_BATCH]);
  const created = lines.slice(1).map((line) => line.split(',')[1]!);
  t.deepEqual(created, [...created].sort().reverse());
});
