import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { SQLITE_EVENT_STORE_FILE, openEventStore } from './open-event-store.ts';

test('without a KurrentDB url the log is a SQLite file in the data directory, created if missing, for its owner alone whatever the umask', async (t) => {
  process.umask(0o022);
  const root = await mkdtemp(join(tmpdir(), 'weir-open-event-store-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  const dataDir = join(root, 'nested', 'data');

  const store = await openEventStore({ dataDir });
  t.teardown(() => store.close());
  await store.append(
    `invoice-${randomUUID()}`,
    [
      {
        id: randomUUID(),
        type: 'InvoiceCreated',
        data: {},
        metadata: {
          organizationId: 'org_1',
          environment: 'test',
          actor: 'cli',
          correlationId: 'corr_1',
          occurredAt: '2025-01-01T00:00:00.000Z',
        },
      },
    ],
    'no_stream',
  );

  t.true(existsSync(join(dataDir, SQLITE_EVENT_STORE_FILE)));
  t.is(await store.headPosition(), 1n);
  t.is((await stat(dataDir)).mode & 0o777, 0o700);
  // SQLite gives its write-ahead log and shared-memory files the mode of the log file.
  for (const suffix of ['', '-wal', '-shm'])
    t.is((await stat(join(dataDir, `${SQLITE_EVENT_STORE_FILE}${suffix}`))).mode & 0o777, 0o600, suffix);
});
