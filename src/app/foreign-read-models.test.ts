import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import Database from 'better-sqlite3';
import { createOrganization } from '../tenancy/create-organization.ts';
import { createSqliteReadStore, SQLITE_READ_STORE_FILE } from '../read-store/sqlite-read-store.ts';
import { createManualClock } from '../shared/clock.ts';
import { foreignCheckSkipped } from './foreign-read-models.ts';
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
    lines.some(
      (line) => line['event'] === 'read_models.foreign' || line['event'] === 'read_models.belonging_unchecked',
    ),
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

test('the check covers an SQLite log with the data dir’s own read models; MongoDB, KurrentDB and a shared read store are named as not checked', (t) => {
  const setup = { kurrentDb: false, mongoDb: false, sharedReadStore: false };
  t.is(foreignCheckSkipped(setup), null);
  t.regex(foreignCheckSkipped({ ...setup, mongoDb: true }) ?? '', /^the read models are in MongoDB, not SQLite files/);
  t.regex(foreignCheckSkipped({ ...setup, kurrentDb: true }) ?? '', /^the log is in KurrentDB, /);
  t.regex(foreignCheckSkipped({ ...setup, kurrentDb: true, mongoDb: true }) ?? '', /^the read models are in MongoDB/);
  t.regex(
    foreignCheckSkipped({ ...setup, sharedReadStore: true }) ?? '',
    /^the read store is shared .*: weir audit verify compares them with a rebuild from the log$/,
  );
});

test('a start on a shared read store leaves it as it is and says in one info line that it was not checked, and why (nothing said before)', async (t) => {
  const elsewhere = await dataDirWith(t, 'Elsewhere');
  const shared = createSqliteReadStore({ path: join(elsewhere.dataDir, SQLITE_READ_STORE_FILE) });
  const dataDir = await mkdtemp(join(tmpdir(), 'weir-foreign-read-models-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const lines: Record<string, unknown>[] = [];
  const weir = await startWeir(
    { port: 0, host: '127.0.0.1', dataDir, chainEnv: {}, localChain: false },
    {
      log: (line) => lines.push(JSON.parse(line) as Record<string, unknown>),
      clock: createManualClock(NOW),
      sharedReadStore: shared,
    },
  );
  await weir.stop();
  await shared.close();
  const said = lines.filter((line) => line['event'] === 'read_models.belonging_unchecked');
  t.is(said.length, 1);
  t.like(said[0], { level: 30 });
  t.regex(String(said[0]!['msg']), /^read models not checked against the log at start: the read store is shared/);
  t.false(lines.some((line) => line['event'] === 'read_models.foreign'));
});
