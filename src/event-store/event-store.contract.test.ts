import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import test from 'ava';
import { eventStoreContract } from './event-store.contract.ts';
import { WrongExpectedRevisionError, type EventMetadata, type EventStore, type NewEvent } from './event-store.ts';
import { createKurrentDbEventStore } from './kurrentdb-event-store.ts';
import { createSqliteEventStore } from './sqlite-event-store.ts';

const run = promisify(execFile);

const temporaryDirectory = () => mkdtemp(join(tmpdir(), 'weir-event-store-'));

eventStoreContract(test, 'sqlite', async () => {
  const directory = await temporaryDirectory();
  const store = createSqliteEventStore({ path: join(directory, 'events.sqlite3') });
  return {
    store,
    async cleanup() {
      await store.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
});

const kurrentDbUrl = process.env.KURRENTDB_URL;
if (kurrentDbUrl) {
  eventStoreContract(test, 'kurrentdb', async () => {
    const store = createKurrentDbEventStore({ connectionString: kurrentDbUrl });
    return { store, cleanup: () => store.close() };
  });
} else {
  console.log('event-store contract: KURRENTDB_URL is not set, the KurrentDB adapter is not tested');
}

const metadata: EventMetadata = {
  organizationId: 'org_contract',
  environment: 'test',
  actor: 'system:contract-test',
  correlationId: 'corr_1',
  occurredAt: '2025-01-02T03:04:05.678Z',
};
const newEvent = (type: string): NewEvent => ({ id: randomUUID(), type, data: { type }, metadata });

/** Resolves on the first call of the listener, then unsubscribes. */
const nextAppendNotice = (store: EventStore, timeoutMs: number): Promise<void> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      unsubscribe();
      reject(new Error(`no onAppended notice within ${timeoutMs} ms`));
    }, timeoutMs);
    const unsubscribe = store.onAppended(() => {
      clearTimeout(timer);
      unsubscribe();
      resolve();
    });
  });

test("sqlite: a second store on the same file sees the first one's appends through onAppended and readAll", async (t) => {
  const directory = await temporaryDirectory();
  const path = join(directory, 'events.sqlite3');
  const writer = createSqliteEventStore({ path });
  const reader = createSqliteEventStore({ path });
  t.teardown(async () => {
    await writer.close();
    await reader.close();
    await rm(directory, { recursive: true, force: true });
  });

  const notice = nextAppendNotice(reader, 5000);
  const streamId = `invoice-${randomUUID()}`;
  const events = [newEvent('InvoiceCreated'), newEvent('InvoiceSent')];
  const appended = await writer.append(streamId, events, 'no_stream');
  await notice;

  t.deepEqual(
    (await reader.readAll(null, 10)).map((event) => event.id),
    events.map((event) => event.id),
  );
  t.is(await reader.headPosition(), appended.position);

  // The second store checks revisions against the file, not against what it has seen.
  await t.throwsAsync(reader.append(streamId, [newEvent('InvoicePaid')], 0), {
    instanceOf: WrongExpectedRevisionError,
  });
  const paid = await reader.append(streamId, [newEvent('InvoicePaid')], 1);
  t.true(paid.position > appended.position);
  t.deepEqual(
    (await writer.readStream(streamId)).map((event) => event.type),
    ['InvoiceCreated', 'InvoiceSent', 'InvoicePaid'],
  );
});

test('sqlite: appends made by another process wake onAppended and are readable', async (t) => {
  const directory = await temporaryDirectory();
  const path = join(directory, 'events.sqlite3');
  const store = createSqliteEventStore({ path });
  t.teardown(async () => {
    await store.close();
    await rm(directory, { recursive: true, force: true });
  });
  const streamId = `checkout_session-${randomUUID()}`;
  await store.append(streamId, [newEvent('CheckoutSessionCreated')], 'no_stream');

  const notice = nextAppendNotice(store, 10_000);
  const projectRoot = fileURLToPath(new URL('../../', import.meta.url));
  const storeModule = new URL('./sqlite-event-store.ts', import.meta.url).href;
  const otherProcess = `
    import { createSqliteEventStore } from ${JSON.stringify(storeModule)};
    const store = createSqliteEventStore({ path: ${JSON.stringify(path)} });
    const metadata = ${JSON.stringify(metadata)};
    const result = await store.append(${JSON.stringify(streamId)}, [
      { id: crypto.randomUUID(), type: 'PaymentDetected', data: { by: 'other process' }, metadata },
    ], 0);
    await store.close();
    console.log(String(result.position));
  `;
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', otherProcess], {
    cwd: projectRoot,
  });
  await notice;

  const recorded = await store.readStream(streamId);
  t.deepEqual(
    recorded.map((event) => event.type),
    ['CheckoutSessionCreated', 'PaymentDetected'],
  );
  t.deepEqual(recorded[1]?.data, { by: 'other process' });
  t.is(String(recorded[1]?.position), stdout.trim());
  t.is(await store.headPosition(), recorded[1]!.position);
});
