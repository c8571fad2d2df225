import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { SETUP_TOKEN_FILE } from '../dashboard/auth/setup-token.ts';
import { SQLITE_READ_STORE_FILE } from '../read-store/sqlite-read-store.ts';
import { silentLogger } from '../shared/logger.ts';
import { openStores } from './open-stores.ts';
import { startWeir } from './start-weir.ts';

test('a read store that cannot open closes the log opened before it: nothing is left open behind the error', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'weir-open-stores-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  // A directory where the read models' file goes: SQLite cannot open it.
  await mkdir(join(dataDir, SQLITE_READ_STORE_FILE));
  await t.throwsAsync(
    openStores({ dataDir }, () => {}),
    { any: true, code: 'SQLITE_CANTOPEN' },
  );
  // The log runs in WAL mode: its -wal file is there while a connection is open, removed by the last close.
  t.true(existsSync(join(dataDir, 'events.sqlite3')));
  t.false(existsSync(join(dataDir, 'events.sqlite3-wal')), 'the log was closed');
});

test('a start that fails after the stores opened closes both: the log and the read models', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'weir-failed-start-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const failing = new Error('the read store wrapper failed');
  await t.throwsAsync(
    startWeir(
      { port: 0, host: '127.0.0.1', dataDir, chainEnv: {}, localChain: false },
      {
        logger: silentLogger(),
        wrapReadStore: () => {
          throw failing;
        },
      },
    ),
    { is: failing },
  );
  // Both run in WAL mode: a -wal file is there while a connection is open, removed by the last close.
  for (const file of ['events.sqlite3', SQLITE_READ_STORE_FILE]) {
    t.true(existsSync(join(dataDir, file)), file);
    t.false(existsSync(join(dataDir, `${file}-wal`)), `${file} closed`);
  }
});

test('with no dashboard user, a start keeps the setup token in its file for the owner alone, and the stop removes it', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'weir-setup-file-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const lines: string[] = [];
  const weir = await startWeir(
    { port: 0, host: '127.0.0.1', dataDir, chainEnv: {}, localChain: false },
    { log: (line) => lines.push(line) },
  );
  const file = join(dataDir, SETUP_TOKEN_FILE);
  t.is((await readFile(file, 'utf8')).trim(), weir.dashboardSetupToken ?? 'no token');
  t.is((await stat(file)).mode & 0o777, 0o600);
  t.false(lines.join('\n').includes(String(weir.dashboardSetupToken)), 'never in a log line');
  await weir.stop();
  t.false(existsSync(file));
});
