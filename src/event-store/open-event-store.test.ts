import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { SQLITE_EVENT_STORE_FILE, openEventStore } from './open-event-store.ts';

test('without a KurrentDB url the log is a SQLite file in the data directory, created if missing', async (t) => {
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
});
