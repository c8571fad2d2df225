import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import Database from 'better-sqlite3';
import { createSqliteEventStore } from '../event-store/sqlite-event-store.ts';
import { auditTestMetadata as metadata } from './event-metadata.fixture.ts';
import { verifyChain } from './verify-chain.ts';

/** A log of three notes, edited with `sql` behind Weir's back, then verified. */
async function verifyEdited(t: ExecutionContext, ...sql: string[]) {
  const directory = await mkdtemp(join(tmpdir(), 'weir-verify-chain-'));
  t.teardown(() => rm(directory, { recursive: true, force: true }));
  const path = join(directory, 'events.sqlite3');
  const writing = createSqliteEventStore({ path });
  for (const n of [1, 2, 3])
    await writing.append(`note-${n}`, [{ id: randomUUID(), type: 'NoteWritten', data: { n }, metadata }], 'any');
  await writing.close();
  const db = new Database(path);
  for (const statement of sql) db.prepare(statement).run();
  db.close();
  const eventStore = createSqliteEventStore({ path, readonly: true });
  t.teardown(() => eventStore.close());
  return verifyChain({ eventStore, trustedKeys: [] });
}

test('an edited event is named by its position, type and stream', async (t) => {
  const report = await verifyEdited(t, `UPDATE events SET data = '{"n":20}' WHERE position = 2`);
  t.false(report.holds);
  t.deepEqual(report.problems, [
    {
      kind: 'content_changed',
      position: '2',
      message: 'the event at 2 (NoteWritten of note-2) is not what was written there: its content was changed',
    },
  ]);
});

test('a removed event breaks the link of the one after it, named by its position, type and stream', async (t) => {
  const report = await verifyEdited(t, 'DELETE FROM events WHERE position = 2');
  t.deepEqual(
    report.problems.map((p) => p.message),
    [
      'the event at 3 (NoteWritten of note-3) does not follow the event before it: events were removed, inserted or reordered before it',
    ],
  );
});
