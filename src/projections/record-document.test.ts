import test from 'ava';
import type { RecordedEvent } from '../event-store/event-store.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import { foldIntoDocument, recordOf, type RecordDoc } from './record-document.ts';

type Counter = { id: string; redeemed: number };
type CounterEvent = { type: 'Created' | 'Redeemed' };
const evolve = (record: Counter | null, event: CounterEvent): Counter | null =>
  event.type === 'Created' ? { id: 'c1', redeemed: 0 } : record && { ...record, redeemed: record.redeemed + 1 };
const recorded = (types: CounterEvent['type'][]) =>
  types.map((type, revision) => ({ streamId: 'counter-c1', revision, type, data: {} }) as unknown as RecordedEvent);

test('a batch repeated after a crash is not applied twice: a redemption is counted once', async (t) => {
  const docs = createEmbeddedReadStore({}).collection<RecordDoc<Counter>>('counters');
  const events = recorded(['Created', 'Redeemed', 'Redeemed']);
  for (const event of events) await foldIntoDocument(docs, 'c1', event, evolve);
  for (const event of events.slice(1)) t.is(await foldIntoDocument(docs, 'c1', event, evolve), null);
  const doc = (await docs.get('c1'))!;
  t.is(doc._revision, 2);
  t.deepEqual(recordOf<Counter>(doc), { id: 'c1', redeemed: 2 });
});

test('the creation event (revision 0) starts from nothing, whatever a stale document holds', async (t) => {
  const docs = createEmbeddedReadStore({}).collection<RecordDoc<Counter>>('counters');
  await docs.put({ _id: 'c1', id: 'c1', redeemed: 9 });
  t.deepEqual(await foldIntoDocument(docs, 'c1', recorded(['Created'])[0]!, evolve), { id: 'c1', redeemed: 0 });
});
