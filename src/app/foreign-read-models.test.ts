import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import Database from 'better-sqlite3';
import { createOrganization } from '../tenancy/create-organization.ts';
import { READ_MODEL_INDEXES } from '../projections/all-projections.ts';
import { createSqliteReadStore, SQLITE_READ_STORE_FILE } from '../read-store/sqlite-read-store.ts';
import { createManualClock } from '../shared/clock.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import { ConfigError } from './config.ts';
import { portBelongingCheck } from './foreign-read-models.ts';
import { startWeir, type Weir } from './start-weir.ts';

const NOW = Date.parse('2026-12-02T03:00:00.000Z');

/** Weir on `dataDir`, its log lines kept as parsed JSON. */
const start = (t: ExecutionContext, dataDir: string, lines: Record<string, unknown>[] = []) =>
  startWeir(
    { port: 0, host: '127.0.0.1', dataDir, chainEnv: {}, localChain: false },
    { log: (line) => lines.push(JSON.parse(line) as Record<string, unknown>), clock: createManualClock(NOW) },
  ).then((weir) => {
    t.teardown(() => weir.stop());
    return weir;
  });

/** A data dir whose log and read models hold one organization of this name; its Weir stopped. */
async function dataDirWith(t: ExecutionContext, name: string): Promise<{ dataDir: string; organizationId: string }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'weir-foreign-read-models-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const weir = await start(t, dataDir);
  const { organizationId } = await createOrganization(weir.commands, name);
  await weir.projections.waitFor((await weir.eventStore.headPosition()) ?? 0n);
  await weir.stop();
  return { dataDir, organizationId };
}

/** The organizations the read models hold: an organization's test and live records. */
const organizationIds = async (weir: Weir): Promise<string[]> =>
  (await weir.readStore.collection('organizations').find({})).map((doc) => doc._id).sort();
const recordsOf = (organizationId: string) => [`${organizationId}_live`, `${organizationId}_test`];

test('a start on read models of another data dir moves them aside to a dated name, says so in one warn line, and serves read models rebuilt from this log', async (t) => {
  const here = await dataDirWith(t, 'Here');
  const elsewhere = await dataDirWith(t, 'Elsewhere');
  // The restore mistake: the read models of another backup copied in beside this log.
  await copyFile(join(elsewhere.dataDir, SQLITE_READ_STORE_FILE), join(here.dataDir, SQLITE_READ_STORE_FILE));

  const lines: Record<string, unknown>[] = [];
  const weir = await start(t, here.dataDir, lines);
  t.deepEqual(await organizationIds(weir), recordsOf(here.organizationId));
  const aside = `${SQLITE_READ_STORE_FILE}.foreign-2026-12-02T03-00-00.000Z`;
  t.true((await readdir(here.dataDir)).includes(aside), 'moved aside, not deleted');
  const warned = lines.filter((line) => line['event'] === 'read_models.foreign');
  t.is(warned.length, 1);
  t.like(warned[0], {
    level: 40,
    file: join(here.dataDir, SQLITE_READ_STORE_FILE),
    movedTo: join(here.dataDir, aside),
  });
  t.regex(
    String(warned[0]!['msg']),
    new RegExp(
      `holds organization ${elsewhere.organizationId}_live and 1 more as events\\.sqlite3 never recorded it: .*moved read-models\\.sqlite3 aside`,
    ),
  );

  // What was set aside is the other data dir's, whole: nothing of it was lost.
  const kept = new Database(join(here.dataDir, aside), { readonly: true });
  t.teardown(() => kept.close());
  t.deepEqual(
    kept.prepare("SELECT id FROM documents WHERE collection = 'organizations' ORDER BY id").pluck().all(),
    recordsOf(elsewhere.organizationId),
  );
});

test('a start on read models ahead of the log rebuilds them from the log; read models that belong are kept, with no warning', async (t) => {
  const { dataDir, organizationId } = await dataDirWith(t, 'Here');
  const lines: Record<string, unknown>[] = [];
  const again = await start(t, dataDir, lines);
  const head = (await again.eventStore.headPosition()) ?? 0n;
  await again.stop();
  t.false(
    lines.some((line) => line['event'] === 'read_models.foreign' || line['event'] === 'read_models.belonging_checked'),
    'its own read models stay, checked',
  );
  t.deepEqual(
    (await readdir(dataDir)).filter((name) => name.includes('.foreign-')),
    [],
  );

  // A later backup's read models: past the end of this log.
  const later = createSqliteReadStore({ path: join(dataDir, SQLITE_READ_STORE_FILE) });
  await later.setCheckpoint('projections', head + 5n);
  await later.close();
  const ahead: Record<string, unknown>[] = [];
  const weir = await start(t, dataDir, ahead);
  t.is(weir.projections.position(), head, 'the read models are at the log’s end, not past it');
  t.deepEqual(await organizationIds(weir), recordsOf(organizationId));
  t.regex(
    String(ahead.find((line) => line['event'] === 'read_models.foreign')?.['msg']),
    new RegExp(`has read the log up to position ${head + 5n}, but events\\.sqlite3 ends at position ${head}`),
  );
});

test('a start whose log is gone (deleted, or WEIR_EVENT_STORE_FILE naming a new one) sets the read models aside: they would have hidden the new log’s first events', async (t) => {
  const { dataDir } = await dataDirWith(t, 'Before');
  await rm(join(dataDir, 'events.sqlite3'));
  const lines: Record<string, unknown>[] = [];
  const weir = await start(t, dataDir, lines);
  t.deepEqual(await organizationIds(weir), [], 'a new log: none of the old organizations served');
  const { organizationId: fresh } = await createOrganization(weir.commands, 'After');
  await weir.projections.waitFor((await weir.eventStore.headPosition()) ?? 0n);
  t.deepEqual(await organizationIds(weir), recordsOf(fresh), 'the new log’s first events are read');
  t.regex(
    String(lines.find((line) => line['event'] === 'read_models.foreign')?.['msg']),
    /has read the log up to position [1-9]\d*, but events\.sqlite3 ends at position 0/,
  );
});

test('the files are checked for an SQLite log with the data dir’s own read models; MongoDB, KurrentDB and a shared read store through the ports, named in their words', (t) => {
  const setup = { kurrentDb: false, mongoDb: false, sharedReadStore: false, dataDir: '/data' };
  t.is(portBelongingCheck(setup), null);
  t.like(portBelongingCheck({ ...setup, mongoDb: true }), {
    readModels: 'the MongoDB database',
    log: 'events.sqlite3',
  });
  t.regex(portBelongingCheck({ ...setup, mongoDb: true })?.remedy ?? '', /^point MONGODB_URL \(--mongodb-url\)/);
  t.like(portBelongingCheck({ ...setup, kurrentDb: true }), {
    readModels: 'read-models.sqlite3',
    log: 'the KurrentDB log',
  });
  t.regex(portBelongingCheck({ ...setup, kurrentDb: true })?.remedy ?? '', /move \/data\/read-models\.sqlite3 out of/);
  t.like(portBelongingCheck({ ...setup, kurrentDb: true, mongoDb: true }), { readModels: 'the MongoDB database' });
  t.like(portBelongingCheck({ ...setup, mongoDb: true, eventStoreFile: '/shared/events.sqlite3' }), {
    log: '/shared/events.sqlite3',
  });
  t.like(portBelongingCheck({ ...setup, sharedReadStore: true, mongoDb: true }), {
    readModels: 'the shared read store',
  });
});

/** A Weir on a new data dir given `shared` as its read store; its log lines kept. */
async function startShared(t: ExecutionContext, shared: ReadStore, lines: Record<string, unknown>[], dataDir?: string) {
  const dir = dataDir ?? (await mkdtemp(join(tmpdir(), 'weir-foreign-read-models-')));
  if (!dataDir) t.teardown(() => rm(dir, { recursive: true, force: true }));
  const weir = await startWeir(
    { port: 0, host: '127.0.0.1', dataDir: dir, chainEnv: {}, localChain: false },
    {
      log: (line) => lines.push(JSON.parse(line) as Record<string, unknown>),
      clock: createManualClock(NOW),
      sharedReadStore: shared,
    },
  );
  // Stopped before the shared store closes (teardowns run last first); a stop again is the same stop.
  t.teardown(() => weir.stop());
  return { weir, dataDir: dir };
}

test('a start on a shared read store of another log refuses, saying what it found, that they are not this log’s and what to do; the store is left as it is', async (t) => {
  const elsewhere = await dataDirWith(t, 'Elsewhere');
  // In the layout Weir opens it with: another would drop the read models.
  const shared = createSqliteReadStore({
    path: join(elsewhere.dataDir, SQLITE_READ_STORE_FILE),
    ...READ_MODEL_INDEXES,
  });
  t.teardown(() => shared.close());
  const position = await shared.getCheckpoint('projections');
  t.true((position ?? 0n) > 0n);

  // Ahead: a new log (head 0) under read models that have read past it.
  const lines: Record<string, unknown>[] = [];
  const ahead = await t.throwsAsync(startShared(t, shared, lines), { instanceOf: ConfigError });
  t.is(
    ahead?.message,
    `the shared read store has read the log up to position ${position}, but events.sqlite3 ends at position 0: they are not from the same backup (or the log lost its last events). These read models are not this log’s, so Weir does not serve them: give this Weir its log’s read store, or empty it so the projections rebuild them from the log`,
  );
  t.like(
    lines.find((line) => line['event'] === 'read_models.foreign'),
    { level: 50, msg: ahead?.message },
  );
  t.is(await shared.getCheckpoint('projections'), position, 'left as it was');

  // Foreign: read models at or behind this log's head, but of another log's organizations.
  const here = await dataDirWith(t, 'Here');
  await shared.setCheckpoint('projections', 1n);
  const foreign = await t.throwsAsync(startShared(t, shared, [], here.dataDir), { instanceOf: ConfigError });
  t.regex(
    foreign?.message ?? '',
    new RegExp(
      `^the shared read store holds organization ${elsewhere.organizationId}_live and 1 more as events\\.sqlite3 never recorded it\\. These read models are not this log’s`,
    ),
  );
  // The refused start let go of its data dir: a start with its own read models follows.
  const weir = await start(t, here.dataDir);
  t.deepEqual(await organizationIds(weir), recordsOf(here.organizationId));
});

test('a shared read store starts empty under a new log and, once projected, passes the check at the next start (one info line says it ran)', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'weir-foreign-read-models-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  const shared = createSqliteReadStore({ path: join(root, SQLITE_READ_STORE_FILE), ...READ_MODEL_INDEXES });
  t.teardown(() => shared.close());
  const first: Record<string, unknown>[] = [];
  const { weir, dataDir } = await startShared(t, shared, first);
  const { organizationId } = await createOrganization(weir.commands, 'Shared');
  const head = (await weir.eventStore.headPosition()) ?? 0n;
  await weir.projections.waitFor(head);
  await weir.stop();
  t.like(
    first.find((line) => line['event'] === 'read_models.belonging_checked'),
    {
      level: 30,
      msg: 'read models checked against the log: read models at log position none of 0, 0 organizations all in the log',
    },
  );

  const again: Record<string, unknown>[] = [];
  const restarted = await startShared(t, shared, again, dataDir);
  t.deepEqual(await organizationIds(restarted.weir), recordsOf(organizationId));
  t.regex(
    String(again.find((line) => line['event'] === 'read_models.belonging_checked')?.['msg']),
    new RegExp(`at log position ${head} of ${head}, 2 organizations all in the log$`),
  );
  t.false(again.some((line) => line['event'] === 'read_models.foreign' || line['level'] === 50));
});
