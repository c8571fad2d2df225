import { randomUUID } from 'node:crypto';
import { copyFile, cp, mkdir, mkdtemp, open, readdir, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import Database from 'better-sqlite3';
import { ConfigError } from '../app/config.ts';
import type { NewEvent } from '../event-store/event-store.ts';
import { createSqliteEventStore } from '../event-store/sqlite-event-store.ts';
import { createSqliteReadStore } from '../read-store/sqlite-read-store.ts';
import { backupDataDir, backupSummaryOf } from './backup.ts';
import { BackupCheckError } from './backup-check-error.ts';
import { backupCheckSummaryOf, checkBackup } from './check-backup.ts';

const tempDir = async (t: ExecutionContext): Promise<string> => {
  const dir = await mkdtemp(join(tmpdir(), 'weir-backup-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
};

const newEvent = (n: number): NewEvent => ({
  id: randomUUID(),
  type: 'OrganizationCreated',
  data: { n },
  metadata: {
    organizationId: 'org_1',
    environment: 'test',
    actor: 'cli',
    correlationId: 'corr_1',
    occurredAt: '2026-01-01T00:00:00.000Z',
  },
});

/** Every file under `dir`, relative, sorted. */
const listing = async (dir: string): Promise<string[]> =>
  (await readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1))
    .sort();

/** A data dir as a running weir serve keeps it: the log and read models open, their latest writes in the -wal. */
async function liveDataDir(t: ExecutionContext) {
  const dataDir = join(await tempDir(t), 'data');
  await mkdir(join(dataDir, 'ingest'), { recursive: true });
  await mkdir(join(dataDir, 'local-chain'), { recursive: true });
  const eventStore = createSqliteEventStore({ path: join(dataDir, 'events.sqlite3') });
  // A commit per write: the server's writes of a second ago are on disk (in the -wal) as these are.
  const readStore = createSqliteReadStore({ path: join(dataDir, 'read-models.sqlite3'), commitEveryWrites: 1 });
  t.teardown(async () => {
    await eventStore.close();
    await readStore.close();
  });
  // org_1 is the read models' organization: a backup checks its stream is in the log.
  for (let n = 0; n < 20; n++) await eventStore.append(`organization-org_${n}`, [newEvent(n)], 'no_stream');
  await readStore.collection('organizations').put({ _id: 'org_1', organizationId: 'org_1' });
  await readStore.setCheckpoint('projections', 20n);
  await writeFile(join(dataDir, 'master.key'), 'bWFzdGVy\n');
  await writeFile(join(dataDir, 'ingest', 'devnet.evm-follower.json'), '{"block":12}');
  await writeFile(join(dataDir, 'serve.lock'), `${process.pid}\n`);
  await writeFile(join(dataDir, 'dashboard-setup-token'), 'one-time');
  await writeFile(join(dataDir, 'local-chain', 'anvil.pid'), '99999\n');
  await writeFile(join(dataDir, 'local-chain', 'state.json'), '{}');
  return { dataDir, eventStore };
}

test('a backup beside a running server holds every event, the WAL included (a copy of events.sqlite3 alone does not), and the files a restore needs', async (t) => {
  const { dataDir, eventStore } = await liveDataDir(t);
  t.true(existsSync(join(dataDir, 'events.sqlite3-wal')), 'the writer is still open, its writes in the WAL');
  // What a plain `cp events.sqlite3` gets while the server runs: the main file without the WAL.
  const naive = join(await tempDir(t), 'events.sqlite3');
  await copyFile(join(dataDir, 'events.sqlite3'), naive);
  const plain = new Database(naive, { readonly: true });
  const hasLog = plain.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'events'").get() as { n: number };
  const naiveCount = hasLog.n === 0 ? 0 : (plain.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n;
  plain.close();
  t.true(naiveCount < 20, `a plain copy of the file held ${naiveCount} of 20 events`);

  const out = join(await tempDir(t), 'backup');
  const report = await backupDataDir({ dataDir, out });
  // Written on after the backup: not in it.
  await eventStore.append('organization-late', [newEvent(99)], 'no_stream');

  t.deepEqual(await listing(out), [
    'events.sqlite3',
    'ingest/devnet.evm-follower.json',
    'local-chain/state.json',
    'master.key',
    'read-models.sqlite3',
  ]);
  t.deepEqual(
    report.files.map((file) => file.name).slice(-2),
    ['read-models.sqlite3', 'events.sqlite3'],
    'the read models, then the log last: nothing copied is ahead of the copied log',
  );
  t.deepEqual(report.skipped.sort(), [
    'dashboard-setup-token',
    'events.sqlite3-shm',
    'events.sqlite3-wal',
    'local-chain/anvil.pid',
    'read-models.sqlite3-shm',
    'read-models.sqlite3-wal',
    'serve.lock',
  ]);
  t.is(await readFile(join(out, 'master.key'), 'utf8'), 'bWFzdGVy\n');
  t.is((await stat(out)).mode & 0o777, 0o700);

  const restored = createSqliteEventStore({ path: join(out, 'events.sqlite3') });
  const events = await restored.readAll(null, 1000);
  await restored.close();
  t.is(events.length, 20);
  t.deepEqual(
    events.map((event) => event.data['n']),
    Array.from({ length: 20 }, (_, n) => n),
  );
  const readModels = createSqliteReadStore({ path: join(out, 'read-models.sqlite3') });
  t.is(await readModels.getCheckpoint('projections'), 20n);
  t.like(await readModels.collection('organizations').get('org_1'), { organizationId: 'org_1' });
  await readModels.close();
  t.regex(backupSummaryOf(report, dataDir), /^ {2}events\.sqlite3 +SQLite online backup, \d+ bytes$/m);
  t.regex(backupSummaryOf(report, dataDir), new RegExp(`OK: 5 files; to start on it: weir serve --data-dir ${out}$`));
});

test('a backup never overwrites: an --out that exists is refused, and a data dir without a log is an error that creates nothing', async (t) => {
  const { dataDir } = await liveDataDir(t);
  const out = await tempDir(t);
  await writeFile(join(out, 'keep'), 'mine');
  await t.throwsAsync(backupDataDir({ dataDir, out }), {
    instanceOf: ConfigError,
    message: /^backup: .* exists already: name a new folder with --out/,
  });
  t.deepEqual(await readdir(out), ['keep']);

  const mistyped = join(await tempDir(t), 'dta');
  const nowhere = join(await tempDir(t), 'backup');
  await t.throwsAsync(backupDataDir({ dataDir: mistyped, out: nowhere }), {
    instanceOf: ConfigError,
    message: /^backup: no event log at .*dta\/events\.sqlite3: check --data-dir/,
  });
  t.false(existsSync(nowhere));
  t.false(existsSync(mistyped));
});

/** Overwrites `length` bytes of `file` at `offset` with 0xff, as a failing disk or a bad copy does. */
async function overwrite(file: string, offset: number, length: number): Promise<void> {
  const handle = await open(file, 'r+');
  try {
    await handle.write(Buffer.alloc(length, 0xff), 0, length, offset);
  } finally {
    await handle.close();
  }
}

/** A copy of the backup `out` to spoil. */
async function copyOf(t: ExecutionContext, out: string): Promise<string> {
  const copy = join(await tempDir(t), 'restored');
  await cp(out, copy, { recursive: true });
  return copy;
}

test('a backup verifies what it wrote before it reports success, and weir backup --verify finds a copy whose bytes were overwritten or cut short, naming the file', async (t) => {
  const { dataDir } = await liveDataDir(t);
  const out = join(await tempDir(t), 'backup');
  const report = await backupDataDir({ dataDir, out });
  t.deepEqual(report.check.problems, []);
  t.deepEqual(report.check.files, [
    { name: 'events.sqlite3', note: 'integrity_check ok, 20 events up to log position 20' },
    {
      name: 'read-models.sqlite3',
      note: 'integrity_check ok, read models at log position 20 of 20, 1 organization all in the log',
    },
  ]);
  t.regex(backupSummaryOf(report, dataDir), /^verified: events\.sqlite3 integrity_check ok, 20 events/m);
  t.false(
    (await listing(out)).some((name) => /-(wal|shm)$/.test(name)),
    'the check left no -wal or -shm',
  );
  const again = checkBackup(out);
  t.deepEqual(again.problems, []);
  t.regex(backupCheckSummaryOf(again), /\nOK: every SQLite file is whole and the read models belong to the log/);

  // A page of the log overwritten; the read models' header overwritten; the log cut short.
  const scribbled = await copyOf(t, out);
  const logSize = (await stat(join(scribbled, 'events.sqlite3'))).size;
  await overwrite(join(scribbled, 'events.sqlite3'), logSize - 4096, 4096);
  await overwrite(join(scribbled, 'read-models.sqlite3'), 0, 16);
  const spoiled = checkBackup(scribbled);
  t.is(spoiled.problems.length, 2, spoiled.problems.join('\n'));
  t.regex(spoiled.problems[0]!, /^events\.sqlite3: SQLite's integrity_check fails: /);
  t.is(spoiled.problems[1], "read-models.sqlite3: SQLite's integrity_check fails: file is not a database");
  t.regex(backupCheckSummaryOf(spoiled), /\nNOT OK: 2 problems:\n {2}events\.sqlite3: /);

  const cut = await copyOf(t, out);
  await truncate(join(cut, 'events.sqlite3'), Math.floor(logSize / 2));
  const short = checkBackup(cut);
  t.is(short.problems.length, 1, short.problems.join('\n'));
  t.regex(short.problems[0]!, /^events\.sqlite3: SQLite's integrity_check fails: /);

  const nowhere = join(await tempDir(t), 'none');
  t.throws(() => checkBackup(nowhere), {
    instanceOf: ConfigError,
    message: `backup --verify: no folder at ${nowhere}`,
  });
});

test('weir backup --verify says when the log and the read models are not from one backup: read models past the end of the log, or holding organizations it never recorded', async (t) => {
  const { dataDir } = await liveDataDir(t);
  const out = join(await tempDir(t), 'backup');
  await backupDataDir({ dataDir, out });

  const ahead = await copyOf(t, out);
  const later = createSqliteReadStore({ path: join(ahead, 'read-models.sqlite3') });
  await later.setCheckpoint('projections', 25n);
  await later.close();
  t.deepEqual(checkBackup(ahead).problems, [
    'read-models.sqlite3 has read the log up to position 25, but events.sqlite3 ends at position 20: they are not from the same backup (or the log lost its last events); restore both files from the same backup, or start weir serve, which sets read-models.sqlite3 aside and rebuilds it from the log',
  ]);

  const foreign = await copyOf(t, out);
  const other = createSqliteReadStore({ path: join(foreign, 'read-models.sqlite3') });
  await other.collection('organizations').put({ _id: 'org_elsewhere', organizationId: 'org_elsewhere', _revision: 0 });
  await other.close();
  t.deepEqual(checkBackup(foreign).problems, [
    'read-models.sqlite3 holds organization org_elsewhere as events.sqlite3 never recorded it: they are not from the same data dir; restore both files from the same backup, or start weir serve, which sets read-models.sqlite3 aside and rebuilds it from the log',
  ]);
});

test('a data dir whose copy does not verify gets no backup: the error names the file, and no folder is left to pass for one', async (t) => {
  const { dataDir } = await liveDataDir(t);
  // The data dir itself is the restore mistake: read models of a later log than the one beside them.
  const readModels = createSqliteReadStore({ path: join(dataDir, 'read-models.sqlite3') });
  await readModels.setCheckpoint('projections', 99n);
  await readModels.close();
  const out = join(await tempDir(t), 'backup');
  const error = await t.throwsAsync(backupDataDir({ dataDir, out }), { instanceOf: BackupCheckError });
  t.regex(
    error.message,
    /^backup: the copy does not verify, so none is kept: read-models\.sqlite3 has read the log up to position 99, but events\.sqlite3 ends at position 20/,
  );
  t.false(existsSync(out));
});
