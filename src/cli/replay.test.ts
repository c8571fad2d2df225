import test from 'ava';
import type { RecordedEvent } from '../event-store/event-store.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import { documentCounts, type ReplayReport, replaySummaryOf, replayTally } from './replay.ts';

const report: ReplayReport = {
  events: 1234,
  streams: 310,
  position: '1240',
  seconds: 2.345,
  eventsPerSecond: 526,
  readStore: 'embedded (read-models.sqlite3 in the data dir)',
  types: { CheckoutSessionCreated: 300, PaymentDetected: 12, OrganizationCreated: 2, ApiKeyCreated: 920 },
  collections: { checkout_sessions: 300, organizations: 2, api_keys: 4, mails: 0 },
};

test("the replay's summary reads as audit verify's: what was replayed, per type and per read model in aligned columns, where, how fast", (t) => {
  t.is(
    replaySummaryOf(report),
    [
      'log: 1,234 events in 310 streams, through position 1240',
      'events by type:',
      '  ApiKeyCreated           920',
      '  CheckoutSessionCreated  300',
      '  PaymentDetected          12',
      '  OrganizationCreated       2',
      'read models: 306 documents in 3 of 4 collections',
      '  checkout_sessions  300',
      '  api_keys             4',
      '  organizations        2',
      'read store: embedded (read-models.sqlite3 in the data dir)',
      'OK: rebuilt in 2.3 s (526 events/s)',
    ].join('\n'),
  );
});

test('an empty log replays to a summary without an empty table', (t) => {
  const summary = replaySummaryOf({
    ...report,
    events: 0,
    streams: 0,
    position: null,
    types: {},
    collections: { organizations: 0 },
  });
  t.is(summary.split('\n')[0], 'log: no events');
  t.false(summary.includes('events by type'));
  t.regex(summary, /^read models: 0 documents in 0 of 1 collection$/m);
});

test('the tally counts events per type and streams by their first event; the counts are of the rebuilt collections', async (t) => {
  const tally = replayTally();
  const readStore = createEmbeddedReadStore();
  const event = (type: string, streamId: string, revision: number) =>
    ({ type, streamId, revision, position: 0n, id: 'e', data: {}, metadata: {} }) as unknown as RecordedEvent;
  for (const e of [
    event('OrganizationCreated', 'organization-a', 0),
    event('ApiKeyCreated', 'organization-a', 1),
    event('ApiKeyCreated', 'organization-a', 2),
    event('OrganizationCreated', 'organization-b', 0),
  ])
    await tally.projection.apply(e, readStore);
  t.is(tally.streams(), 2);
  t.deepEqual(tally.types(), { OrganizationCreated: 2, ApiKeyCreated: 2 });
  t.deepEqual(tally.projection.collections, [], 'it writes no read model');

  await readStore.collection('organizations').put({ _id: 'a' });
  t.deepEqual(await documentCounts(readStore, ['organizations', 'api_keys', 'organizations']), {
    api_keys: 0,
    organizations: 1,
  });
});
