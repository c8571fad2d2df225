import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { createSqliteEventStore } from '../event-store/sqlite-event-store.ts';
import type { Projection } from '../projections/projection.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import { auditTestMetadata as metadata } from './event-metadata.fixture.ts';
import { verifyReadModels } from './verify-read-models.ts';

/** A read model of notes whose events must carry a `note` (as Weir writes them). */
const notes: Projection = {
  name: 'notes',
  collections: ['notes'],
  categories: ['note'],
  async apply(event, store) {
    const note = event.data.note as { text: string };
    await store.collection('notes').put({ _id: event.streamId, text: note.text.toUpperCase() });
  },
};

test('an event the read models cannot apply (its data edited or swapped in the log) is a failed comparison naming its position, type, stream and read model, not a crash that loses the report', async (t) => {
  const directory = await mkdtemp(join(tmpdir(), 'weir-verify-read-models-'));
  const eventStore = createSqliteEventStore({ path: join(directory, 'events.sqlite3') });
  const live = createEmbeddedReadStore();
  t.teardown(async () => {
    await eventStore.close();
    await live.close();
    await rm(directory, { recursive: true, force: true });
  });
  await eventStore.append(
    'note-1',
    [{ id: randomUUID(), type: 'NoteWritten', data: { note: { text: 'a' } }, metadata }],
    'any',
  );
  // What an edited log holds at position 2: another event's data in place of this one's.
  await eventStore.append(
    'note-2',
    [{ id: randomUUID(), type: 'NoteWritten', data: { transferId: 'x' }, metadata }],
    'any',
  );

  const report = await verifyReadModels({
    eventStore,
    live: { readStore: live, position: async () => 2n },
    projections: [notes],
  });
  t.false(report.holds);
  t.false(report.compared);
  t.regex(
    report.reason ?? '',
    /^the rebuild stopped at position 2: the notes read model cannot apply the NoteWritten event of note-2 there \(/,
  );
});
