import { randomUUID } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
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
  for (let n = 0; n < 20; n++) await eventStore.append(`organization-${n}`, [newEvent(n)], 'no_stream');
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
