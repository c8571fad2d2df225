import { randomUUID } from 'node:crypto';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import Database from 'better-sqlite3';
import { writeRealisticLog } from '../../bench/support/realistic-log.ts';
import {
  CHECKPOINT_SIGNED,
  CHECKPOINT_STREAM,
  signCheckpoint,
  writeCheckpoint,
  type LoggedCheckpoint,
} from '../../src/audit/checkpoints.ts';
import { loadOperatorKey } from '../../src/audit/operator-key.ts';
import { verifyChain, type ChainReport } from '../../src/audit/verify-chain.ts';
import { chainHash, type ChainContent } from '../../src/event-store/event-chain.ts';
import type { EventMetadata } from '../../src/event-store/event-store.ts';
import { createSqliteEventStore } from '../../src/event-store/sqlite-event-store.ts';
import { createManualClock } from '../../src/shared/clock.ts';

/**
 * The log is changed behind Weir's back, in the SQLite file itself, and `verifyChain` must find
 * each change and say where it is. One realistic log is written once; each test tampers with its
 * own copy.
 */

const directory = await mkdtemp(join(tmpdir(), 'weir-audit-tamper-'));
const logFile = join(directory, 'events.sqlite3');
const key = loadOperatorKey({ keyFile: join(directory, 'audit-operator.key') });
const otherKey = loadOperatorKey({ keyFile: join(directory, 'someone-else.key') });
const clock = createManualClock(Date.parse('2026-03-02T00:00:00.000Z'));
/** A position well inside the log, away from both checkpoints. */
const TARGET = 200n;

const metadata: EventMetadata = {
  organizationId: 'org_tamper',
  environment: 'test',
  actor: 'system:test',
  correlationId: 'c',
  occurredAt: '2026-03-02T00:00:00.000Z',
};

const built = (async () => {
  const eventStore = createSqliteEventStore({ path: logFile });
  await writeRealisticLog({ eventStore, targetEvents: 600, organizations: 3, sessionsPerRound: 30 });
  const first = await writeCheckpoint({ eventStore, key, clock });
  // More events after the first checkpoint, then a second one: the log's tail.
  for (let index = 0; index < 10; index += 1)
    await eventStore.append(
      `invoice-tail${index}`,
      [{ id: randomUUID(), type: 'InvoiceCreated', data: {}, metadata }],
      'no_stream',
    );
  const second = await writeCheckpoint({ eventStore, key, clock });
  const head = await eventStore.headPosition();
  await eventStore.close();
  return { first: first!, second: second!, head: head! };
})();

test.after.always(() => rm(directory, { recursive: true, force: true }));

type Row = {
  position: bigint;
  id: string;
  stream_id: string;
  revision: bigint;
  type: string;
  data: string;
  metadata: string;
  previous_hash: string | null;
  hash: string | null;
};

const contentOfRow = (row: Row): ChainContent => ({
  id: row.id,
  streamId: row.stream_id,
  revision: Number(row.revision),
  type: row.type,
  data: row.data,
  metadata: row.metadata,
});

/** Copies the log, changes the copy with `tamper` (raw SQL on the file), then verifies the copy. */
async function verifyTampered(
  tamper: (db: Database.Database) => void,
  options: { published?: LoggedCheckpoint[] } = {},
): Promise<ChainReport> {
  await built;
  const copyDirectory = await mkdtemp(join(tmpdir(), 'weir-audit-tampered-'));
  const copy = join(copyDirectory, 'events.sqlite3');
  await copyFile(logFile, copy);
  const db = new Database(copy);
  db.defaultSafeIntegers(true);
  try {
    tamper(db);
  } finally {
    db.close();
  }
  const eventStore = createSqliteEventStore({ path: copy });
  try {
    return await verifyChain({ eventStore, trustedKeys: [key.publicKey], published: options.published });
  } finally {
    await eventStore.close();
    await rm(copyDirectory, { recursive: true, force: true });
  }
}

const rowAt = (db: Database.Database, position: bigint): Row =>
  db.prepare<[bigint], Row>('SELECT * FROM events WHERE position = ?').get(position)!;

const kindsAndPositions = (report: ChainReport) => report.problems.map((p) => `${p.kind}@${p.position}`);

test('the untouched log holds: every link, both checkpoints', async (t) => {
  const { head } = await built;
  const report = await verifyTampered(() => undefined);
  t.true(report.holds, JSON.stringify(report.problems));
  t.is(report.events, Number(head));
  t.is(report.unchainedEvents, 0);
  t.is(report.checkpoints.checked, 2);
  t.is(report.unsigned, 0, 'the second checkpoint signs every event but its own');
  t.is(report.head?.position, String(head));
  t.is(report.firstProblem, null);
});

test('an edited event is found at its position', async (t) => {
  const report = await verifyTampered((db) => {
    db.prepare("UPDATE events SET data = json_set(data, '$.tampered', 'yes') WHERE position = ?").run(TARGET);
  });
  t.false(report.holds);
  t.deepEqual(kindsAndPositions(report), [`content_changed@${TARGET}`]);
  t.regex(report.firstProblem!.message, /content was changed/);
});

test("an edited event's metadata (who did it) is found at its position", async (t) => {
  const report = await verifyTampered((db) => {
    db.prepare("UPDATE events SET metadata = json_set(metadata, '$.actor', 'user:nobody') WHERE position = ?").run(
      TARGET + 5n,
    );
  });
  t.deepEqual(kindsAndPositions(report), [`content_changed@${TARGET + 5n}`]);
});

test('a deleted event is found: the event after it no longer follows', async (t) => {
  const report = await verifyTampered((db) => {
    db.prepare('DELETE FROM events WHERE position = ?').run(TARGET);
  });
  t.deepEqual(kindsAndPositions(report), [`link_broken@${TARGET + 1n}`]);
  t.regex(report.firstProblem!.message, /removed, inserted or reordered before it/);
});

test('an event inserted with a forged link is found where the log goes on after it', async (t) => {
  const report = await verifyTampered((db) => {
    // Make room after TARGET, then insert an event linked to the one before it, as a careful forger would.
    db.prepare('UPDATE events SET position = -position WHERE position > ?').run(TARGET);
    db.prepare('UPDATE events SET position = 1 - position WHERE position < 0').run();
    const previous = rowAt(db, TARGET).hash!;
    const content: ChainContent = {
      id: randomUUID(),
      streamId: 'checkout_session-forged',
      revision: 0,
      type: 'CheckoutSessionCompleted',
      data: '{"amountPaid":"100000000"}',
      metadata: JSON.stringify(metadata),
    };
    db.prepare(
      'INSERT INTO events (position, id, stream_id, revision, type, data, metadata, previous_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    ).run(
      TARGET + 1n,
      content.id,
      content.streamId,
      0,
      content.type,
      content.data,
      content.metadata,
      previous,
      chainHash(previous, content),
    );
  });
  t.false(report.holds);
  // The forged event itself links; the event after it was chained to the real one before it.
  t.is(report.firstProblem?.kind, 'link_broken');
  t.is(report.firstProblem?.position, String(TARGET + 2n));
  // Every checkpointed position now holds another event.
  t.true(report.problems.some((p) => p.kind === 'checkpoint_mismatch'));
});

test('an event inserted without a link is found at its own position', async (t) => {
  const { head } = await built;
  const report = await verifyTampered((db) => {
    db.prepare(
      'INSERT INTO events (position, id, stream_id, revision, type, data, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ).run(head + 1n, randomUUID(), 'invoice-forged', 0, 'InvoicePaid', '{}', JSON.stringify(metadata));
  });
  t.deepEqual(kindsAndPositions(report), [`link_missing@${head + 1n}`]);
});

test('two events swapped are found at the first of them', async (t) => {
  const report = await verifyTampered((db) => {
    db.prepare('UPDATE events SET position = -1 WHERE position = ?').run(TARGET);
    db.prepare('UPDATE events SET position = ? WHERE position = ?').run(TARGET, TARGET + 1n);
    db.prepare('UPDATE events SET position = ? WHERE position = -1').run(TARGET + 1n);
  });
  t.false(report.holds);
  t.deepEqual(report.firstProblem?.kind, 'link_broken');
  t.is(report.firstProblem?.position, String(TARGET));
  t.true(kindsAndPositions(report).includes(`link_broken@${TARGET + 1n}`));
});

test('an edit with the whole chain after it recomputed is found by the checkpoint it contradicts', async (t) => {
  const { first } = await built;
  const report = await verifyTampered((db) => {
    db.prepare("UPDATE events SET data = json_set(data, '$.tampered', 'yes') WHERE position = ?").run(TARGET);
    let previous = rowAt(db, TARGET - 1n).hash!;
    const relink = db.prepare('UPDATE events SET previous_hash = ?, hash = ? WHERE position = ?');
    for (const row of db
      .prepare<[bigint], Row>('SELECT * FROM events WHERE position >= ? ORDER BY position')
      .all(TARGET)) {
      const hash = chainHash(previous, contentOfRow(row));
      relink.run(previous, hash, row.position);
      previous = hash;
    }
  });
  // Every link holds now; only the signed checkpoints say the log before them was rewritten.
  t.false(report.holds);
  t.deepEqual(
    report.problems.map((p) => p.kind),
    ['checkpoint_mismatch', 'checkpoint_mismatch'],
  );
  t.is(report.firstProblem?.position, first.position);
  t.regex(report.firstProblem!.message, /was rewritten/);
});

test('a checkpoint signed with a key other than the operator’s is found at its position', async (t) => {
  const { head } = await built;
  const report = await verifyTampered((db) => {
    const last = rowAt(db, head);
    const checkpoint = signCheckpoint(otherKey, { position: head, hash: last.hash! }, new Date(clock.now()));
    const content: ChainContent = {
      id: randomUUID(),
      streamId: CHECKPOINT_STREAM,
      revision:
        Number(db.prepare('SELECT max(revision) FROM events WHERE stream_id = ?').pluck().get(CHECKPOINT_STREAM)) + 1,
      type: CHECKPOINT_SIGNED,
      data: JSON.stringify(checkpoint),
      metadata: JSON.stringify({ ...metadata, organizationId: '' }),
    };
    db.prepare(
      'INSERT INTO events (position, id, stream_id, revision, type, data, metadata, previous_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    ).run(
      head + 1n,
      content.id,
      content.streamId,
      content.revision,
      content.type,
      content.data,
      content.metadata,
      last.hash,
      chainHash(last.hash!, content),
    );
  });
  t.deepEqual(kindsAndPositions(report), [`checkpoint_forged@${head + 1n}`]);
  t.regex(report.firstProblem!.message, /not the operator's key/);
});

test('a checkpoint whose signed hash was altered (and its link recomputed) is found at its position', async (t) => {
  const { second } = await built;
  const at = BigInt(second.loggedAt!);
  const report = await verifyTampered((db) => {
    const row = rowAt(db, at);
    db.prepare('UPDATE events SET data = json_set(data, ?, ?) WHERE position = ?').run('$.hash', 'f'.repeat(64), at);
    const changed = rowAt(db, at);
    db.prepare('UPDATE events SET hash = ? WHERE position = ?').run(
      chainHash(row.previous_hash!, contentOfRow(changed)),
      at,
    );
  });
  // Its signature no longer holds, and the hash it now names is not the chain's at its position.
  t.deepEqual(kindsAndPositions(report), [`checkpoint_mismatch@${second.position}`, `checkpoint_forged@${at}`]);
  t.regex(report.problems[1]!.message, /signature that does not hold/);
});

test('events cut from the end are found by a published checkpoint past the new end', async (t) => {
  const { first, second } = await built;
  const cutAfter = BigInt(first.loggedAt!);
  const report = await verifyTampered(
    (db) => {
      db.prepare('DELETE FROM events WHERE position > ?').run(cutAfter);
    },
    { published: [{ ...second, loggedAt: null }] },
  );
  t.deepEqual(kindsAndPositions(report), [`checkpoint_position_missing@${second.position}`]);
  t.regex(report.firstProblem!.message, new RegExp(`the log ends at ${cutAfter}`));
});

test('events cut from the end with no checkpoint past the new end: the chain holds, and the events no signature covers are counted', async (t) => {
  const { first } = await built;
  const cutAfter = BigInt(first.position) + 6n;
  const report = await verifyTampered((db) => {
    db.prepare('DELETE FROM events WHERE position > ?').run(cutAfter);
  });
  t.true(report.holds, 'a cut tail breaks no link: only a signature past it would tell');
  t.is(report.checkpoints.checked, 1);
  // Six events after the first checkpoint's position, one of them that checkpoint's own.
  t.is(report.unsigned, 5);
});

test('a log sealed when the chain started: an edit before the seal is found, located at the seal', async (t) => {
  const legacyDirectory = await mkdtemp(join(tmpdir(), 'weir-audit-legacy-'));
  t.teardown(() => rm(legacyDirectory, { recursive: true, force: true }));
  const path = join(legacyDirectory, 'events.sqlite3');
  const legacy = new Database(path);
  legacy.exec(`CREATE TABLE events (
    position INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, stream_id TEXT NOT NULL,
    revision INTEGER NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL, metadata TEXT NOT NULL,
    UNIQUE (stream_id, revision))`);
  for (let revision = 0; revision < 5; revision += 1)
    legacy
      .prepare('INSERT INTO events (id, stream_id, revision, type, data, metadata) VALUES (?, ?, ?, ?, ?, ?)')
      .run(randomUUID(), 'invoice-old', revision, 'InvoiceNoted', `{"n":${revision}}`, JSON.stringify(metadata));
  legacy.close();

  const opened = createSqliteEventStore({ path });
  await opened.append('invoice-new', [{ id: randomUUID(), type: 'InvoiceCreated', data: {}, metadata }], 'no_stream');
  const intact = await verifyChain({ eventStore: opened, trustedKeys: [] });
  await opened.close();
  t.true(intact.holds, JSON.stringify(intact.problems));
  t.is(intact.unchainedEvents, 5);
  t.is(intact.unchainedThrough, '5');

  const db = new Database(path);
  db.prepare('UPDATE events SET data = ? WHERE position = 3').run('{"n":33}');
  db.close();
  const reopened = createSqliteEventStore({ path });
  t.teardown(() => reopened.close());
  const report = await verifyChain({ eventStore: reopened, trustedKeys: [] });
  t.deepEqual(kindsAndPositions(report), ['seal_broken@5']);
  t.regex(report.firstProblem!.message, /5 events written before the chain started \(through position 5\)/);
});
