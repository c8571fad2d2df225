import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { createCommandHandler } from '../actors/command-handler.ts';
import { ConfigError } from '../app/config.ts';
import { DataDirInUseError, lockDataDir, RESTORE_UNFINISHED_FILE, UnfinishedRestoreError } from '../app/data-dir.ts';
import { createSqliteEventStore } from '../event-store/sqlite-event-store.ts';
import { createSqliteReadStore } from '../read-store/sqlite-read-store.ts';
import { createManualClock } from '../shared/clock.ts';
import { createOrganization } from '../tenancy/create-organization.ts';
import { restoreDataDir, restoreSummaryOf } from './restore.ts';

const NOW = Date.parse('2026-12-02T03:30:00.000Z');

const tempDir = async (t: ExecutionContext): Promise<string> => {
  const dir = await mkdtemp(join(tmpdir(), 'weir-restore-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
};

/** A backup as `weir backup --out` leaves one: a log of one organization, its read models, a key, a chain checkpoint. */
async function backupFolder(t: ExecutionContext): Promise<string> {
  const backup = join(await tempDir(t), 'backup');
  await mkdir(join(backup, 'ingest'), { recursive: true });
  const eventStore = createSqliteEventStore({ path: join(backup, 'events.sqlite3') });
  const commands = createCommandHandler({ eventStore, clock: createManualClock(NOW) });
  const { organizationId } = await createOrganization(commands, 'Restored');
  const head = (await eventStore.headPosition()) ?? 0n;
  await eventStore.close();
  const readStore = createSqliteReadStore({ path: join(backup, 'read-models.sqlite3') });
  await readStore.collection('organizations').put({ _id: `${organizationId}_test`, organizationId });
  await readStore.setCheckpoint('projections', head);
  await readStore.close();
  // Readable by others where it was kept: the restored copy is not.
  await writeFile(join(backup, 'master.key'), 'bWFzdGVy\n', { mode: 0o644 });
  await writeFile(join(backup, 'ingest', 'devnet.evm-follower.json'), '{"block":12}');
  return backup;
}

const restore = (from: string, dataDir: string, force = false) =>
  restoreDataDir({ from, dataDir, force, now: NOW, log: () => {} });

test('weir restore copies a backup that verifies into a new data dir, its folders 0700 and files 0600, and checks the result before saying OK', async (t) => {
  const from = await backupFolder(t);
  const dataDir = join(await tempDir(t), 'data');
  const report = await restore(from, dataDir);
  t.deepEqual((await readdir(dataDir, { recursive: true })).sort(), [
    'events.sqlite3',
    'ingest',
    'ingest/devnet.evm-follower.json',
    'master.key',
    'read-models.sqlite3',
  ]);
  t.is(await readFile(join(dataDir, 'master.key'), 'utf8'), 'bWFzdGVy\n');
  for (const entry of ['', 'ingest'])
    t.is((await stat(join(dataDir, entry))).mode & 0o777, 0o700, `${entry || 'the data dir'} is 0700`);
  for (const file of ['events.sqlite3', 'read-models.sqlite3', 'master.key', 'ingest/devnet.evm-follower.json'])
    t.is((await stat(join(dataDir, file))).mode & 0o777, 0o600, `${file} is 0600`);
  t.deepEqual(report.check.problems, []);
  t.is(report.movedAside, null);
  t.regex(restoreSummaryOf(report), new RegExp(`^OK: to start on it: weir serve --data-dir ${dataDir}$`, 'm'));
  t.regex(
    restoreSummaryOf(report),
    /^verified: events\.sqlite3 integrity_check ok, \d+ events up to log position \d+;.*1 organization all in the log$/m,
  );
});

test('weir restore refuses a backup that does not verify, naming the problem, and touches no data dir', async (t) => {
  const from = await backupFolder(t);
  const later = createSqliteReadStore({ path: join(from, 'read-models.sqlite3') });
  await later.setCheckpoint('projections', 999n);
  await later.close();
  const dataDir = join(await tempDir(t), 'data');
  const error = await t.throwsAsync(restore(from, dataDir), { instanceOf: ConfigError });
  t.regex(
    error.message,
    /^restore: the backup .* does not verify, so nothing was restored: read-models\.sqlite3 has read the log up to position 999, but events\.sqlite3 ends at position \d+:/,
  );
  t.false(existsSync(dataDir));
});

test('weir restore refuses a data dir a weir serve holds, and one that holds anything unless --force moves it aside to a dated name', async (t) => {
  const from = await backupFolder(t);
  const dataDir = join(await tempDir(t), 'data');
  await mkdir(dataDir, { mode: 0o755 });
  await writeFile(join(dataDir, 'events.sqlite3'), 'the log it held before');

  const release = await lockDataDir(dataDir, () => {});
  await t.throwsAsync(restore(from, dataDir, true), {
    instanceOf: DataDirInUseError,
    message: /is using the data dir .*; stop it first: weir restore replaces what it serves/,
  });
  await release();

  const refused = await t.throwsAsync(restore(from, dataDir), { instanceOf: ConfigError });
  t.regex(refused.message, /is not empty \(events\.sqlite3\): give --force to move what it holds aside/);
  t.is(await readFile(join(dataDir, 'events.sqlite3'), 'utf8'), 'the log it held before');

  const report = await restore(from, dataDir, true);
  const aside = `${dataDir}.before-restore-2026-12-02T03-30-00.000Z`;
  t.is(report.movedAside, aside);
  t.is(await readFile(join(aside, 'events.sqlite3'), 'utf8'), 'the log it held before', 'moved aside, not deleted');
  t.deepEqual(report.check.problems, []);
  t.is((await stat(dataDir)).mode & 0o777, 0o700);
  t.false(existsSync(join(dataDir, 'serve.lock')), 'the restore let go of the data dir');
});

/** A data dir holding a log and a folder (a follower's state) for --force to move aside: events.sqlite3, then ingest. */
async function heldDataDir(t: ExecutionContext): Promise<string> {
  const dataDir = join(await tempDir(t), 'data');
  await mkdir(join(dataDir, 'ingest'), { recursive: true });
  await writeFile(join(dataDir, 'events.sqlite3'), 'the log it held before');
  await writeFile(join(dataDir, 'ingest', 'devnet.evm-follower.json'), '{"block":7}');
  return dataDir;
}

test('weir restore --force on a data dir that is a mount point (its entries cannot be renamed beside it, EXDEV) says so and that nothing was moved or restored, and leaves the data dir as it was', async (t) => {
  const from = await backupFolder(t);
  const dataDir = await heldDataDir(t);
  const tried: string[] = [];
  // As the kernel answers a rename out of a mounted file system.
  const acrossDevices = async (source: string, target: string): Promise<void> => {
    tried.push(source);
    throw Object.assign(new Error(`EXDEV: cross-device link not permitted, rename '${source}' -> '${target}'`), {
      code: 'EXDEV',
    });
  };

  const error = await t.throwsAsync(
    restoreDataDir({ from, dataDir, force: true, now: NOW, log: () => {}, rename: acrossDevices }),
    { instanceOf: ConfigError },
  );
  t.is(
    error.message,
    `restore: the data dir ${dataDir} (or its first entry, events.sqlite3) is a mount point of its own, so --force cannot move what it holds beside it: nothing was moved or restored, and the data dir holds what it held; empty it yourself (keep a copy), or restore into another folder`,
  );
  t.deepEqual(tried, [join(dataDir, 'events.sqlite3')], 'it stops at the first entry that cannot move');
  t.deepEqual((await readdir(dataDir, { recursive: true })).sort(), [
    'events.sqlite3',
    'ingest',
    'ingest/devnet.evm-follower.json',
  ]);
  t.is(await readFile(join(dataDir, 'events.sqlite3'), 'utf8'), 'the log it held before');
  t.is(await readFile(join(dataDir, 'ingest', 'devnet.evm-follower.json'), 'utf8'), '{"block":7}');
  t.false(existsSync(join(dataDir, RESTORE_UNFINISHED_FILE)), 'no restore began: nothing to mark unfinished');
  t.deepEqual(
    (await readdir(dirname(dataDir))).filter((name) => name.startsWith('data.before-restore-')),
    [],
    'the folder made to move it into is gone',
  );
  // Nothing holds the data dir: a start (or a restore into another folder's copy) may take it.
  const release = await lockDataDir(dataDir, () => {});
  await release();
});

test('weir restore --force where a later entry is a mount point of its own (EXDEV after others moved) says what moved where and what stayed, not that nothing moved', async (t) => {
  const from = await backupFolder(t);
  const dataDir = await heldDataDir(t);
  // events.sqlite3 moves (entries go in name order); ingest, mounted on its own, cannot.
  const ingestMounted = async (source: string, target: string): Promise<void> => {
    if (source !== join(dataDir, 'ingest')) return rename(source, target);
    throw Object.assign(new Error(`EXDEV: cross-device link not permitted, rename '${source}' -> '${target}'`), {
      code: 'EXDEV',
    });
  };

  const error = await t.throwsAsync(
    restoreDataDir({ from, dataDir, force: true, now: NOW, log: () => {}, rename: ingestMounted }),
    { instanceOf: ConfigError },
  );
  const aside = `${dataDir}.before-restore-2026-12-02T03-30-00.000Z`;
  t.is(
    error.message,
    `restore: ${join(dataDir, 'ingest')} is a mount point of its own, so --force cannot move it beside the data dir: nothing was restored; events.sqlite3 moved to ${aside} before it, the rest (ingest) is still in the data dir; put them back or empty the data dir yourself (keep a copy), or restore into another folder`,
  );
  t.is(await readFile(join(aside, 'events.sqlite3'), 'utf8'), 'the log it held before', 'what moved is kept');
  t.deepEqual((await readdir(dataDir, { recursive: true })).sort(), ['ingest', 'ingest/devnet.evm-follower.json']);
  t.false(existsSync(join(dataDir, RESTORE_UNFINISHED_FILE)), 'no restore began: nothing to mark unfinished');
  const release = await lockDataDir(dataDir, () => {});
  await release();
});

test('weir restore refuses a backup and a data dir of which one holds the other, symbolic links followed, and touches neither', async (t) => {
  const from = await backupFolder(t);
  const parent = dirname(from);
  const before = (await readdir(from, { recursive: true })).sort();
  const link = join(await tempDir(t), 'link-to-backup');
  await symlink(from, link);
  for (const [source, dataDir] of [
    [from, parent],
    [from, join(from, 'data')],
    [link, from],
    [from, join(link, 'data')],
  ] as const) {
    const error = await t.throwsAsync(restore(source, dataDir, true), { instanceOf: ConfigError });
    t.regex(error.message, /are the same folder or one holds the other/, `${source} into ${dataDir}`);
  }
  t.deepEqual((await readdir(from, { recursive: true })).sort(), before, 'the backup is as it was');
  t.false(existsSync(`${parent}.before-restore-2026-12-02T03-30-00.000Z`));
});

test('a data dir a weir restore left unfinished is refused by a start until a restore with --force finishes it, the unfinished one moved aside', async (t) => {
  const from = await backupFolder(t);
  const dataDir = join(await tempDir(t), 'data');
  await mkdir(dataDir, { mode: 0o700 });
  // What a copy cut short leaves: the mark, and part of a backup.
  await writeFile(join(dataDir, RESTORE_UNFINISHED_FILE), '2026-12-02T03:00:00.000Z\n');
  await writeFile(join(dataDir, 'master.key'), 'half');
  const error = await t.throwsAsync(
    lockDataDir(dataDir, () => {}),
    { instanceOf: UnfinishedRestoreError },
  );
  t.regex(error.message, /a weir restore into the data dir .* did not finish .*run weir restore again with --force/);
  t.false(existsSync(join(dataDir, 'serve.lock')), 'the refused start holds no lock');

  const report = await restore(from, dataDir, true);
  t.true(existsSync(join(report.movedAside!, RESTORE_UNFINISHED_FILE)));
  t.false(existsSync(join(dataDir, RESTORE_UNFINISHED_FILE)), 'finished: the mark is gone');
  const release = await lockDataDir(dataDir, () => {});
  await release();
});
