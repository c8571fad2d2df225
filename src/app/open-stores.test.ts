import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { SQLITE_READ_STORE_FILE } from '../read-store/sqlite-read-store.ts';
import { openStores } from './start-weir.ts';

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
