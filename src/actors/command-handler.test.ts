import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { checkoutSessionAggregate } from '../../machines/checkout-session.aggregate.ts';
import { paymentFixture, sessionFixture } from '../../machines/checkout-session.fixture.ts';
import { createSqliteEventStore } from '../event-store/sqlite-event-store.ts';
import type { EventStore } from '../event-store/event-store.ts';
import { createManualClock } from '../shared/clock.ts';
import { ConflictError, NotFoundError } from '../shared/errors.ts';
import {
  alwaysConflictingStore,
  conflictCountingStore,
  readCountingStore,
} from '../../test/support/counting-stores.ts';
import { createCommandHandler } from './command-handler.ts';

const tenant = { organizationId: 'org-1', environment: 'test' as const, actor: 'test' };

async function store(t: import('ava').ExecutionContext): Promise<EventStore> {
  const dir = await mkdtemp(join(tmpdir(), 'weir-commands-'));
  const eventStore = createSqliteEventStore({ path: join(dir, 'events.sqlite3') });
  t.teardown(async () => {
    await eventStore.close();
    await rm(dir, { recursive: true, force: true });
  });
  return eventStore;
}

test('concurrent commands on one stream: the stale append is rejected and retried, so both take effect', async (t) => {
  const eventStore = await store(t);
  const counting = conflictCountingStore(eventStore);
  const commands = createCommandHandler({ eventStore: counting, clock: createManualClock() });
  const session = sessionFixture();
  await commands.handle(checkoutSessionAggregate, session.id, { type: 'CreateCheckoutSession', session }, tenant);
  // Both load revision 0 before either appends; one of them must retry.
  const gate = new Promise<void>((resolve) => {
    setTimeout(resolve, 20);
  });
  const slow: EventStore = {
    ...counting,
    async readStream(id) {
      const events = await eventStore.readStream(id);
      await gate;
      return events;
    },
  };
  const racing = createCommandHandler({ eventStore: slow, clock: createManualClock() });
  await Promise.all([
    racing.handle(
      checkoutSessionAggregate,
      session.id,
      { type: 'RecordTransfer', payment: paymentFixture('a', '100000000') },
      tenant,
    ),
    racing.handle(
      checkoutSessionAggregate,
      session.id,
      { type: 'RecordTransfer', payment: paymentFixture('b', '200000000') },
      tenant,
    ),
  ]);
  t.true(counting.conflicts() >= 1, 'a stale expected revision was rejected');
  const { state } = await commands.load(checkoutSessionAggregate, session.id, null);
  t.deepEqual(state.context.session?.payments.map((p) => p.transferId).sort(), ['a', 'b']);
  t.is((await eventStore.readStream(`checkout_session-${session.id}`)).length, 3);
});

test('a record still busy after every retry is a passing 409 with Retry-After, not the bare revision error (a logged 500)', async (t) => {
  const busy = alwaysConflictingStore(await store(t));
  // Three attempts: the random pause between retries starts only after the second.
  const commands = createCommandHandler({ eventStore: busy, clock: createManualClock(), maxAttempts: 3 });
  const session = sessionFixture();
  const error = await t.throwsAsync(
    commands.handle(checkoutSessionAggregate, session.id, { type: 'CreateCheckoutSession', session }, tenant),
    { instanceOf: ConflictError },
  );
  t.is(busy.appends(), 3, 'tried as often as maxAttempts says');
  t.is(error.statusCode, 409);
  t.is(error.code, 'conflict');
  t.true(error.passing, 'a hosted page answers it with its 503 try-again page');
  t.deepEqual(error.headers, { 'Retry-After': '1' });
  t.is(
    error.message,
    `checkout session ${session.id} is being changed by other requests at the same moment; try again in a moment`,
  );
});

test("a command on another tenant's record is a not-found and writes nothing", async (t) => {
  const eventStore = await store(t);
  const commands = createCommandHandler({ eventStore, clock: createManualClock() });
  const session = sessionFixture();
  await commands.handle(checkoutSessionAggregate, session.id, { type: 'CreateCheckoutSession', session }, tenant);
  await t.throwsAsync(
    commands.handle(
      checkoutSessionAggregate,
      session.id,
      { type: 'CancelCheckoutSession', reason: null },
      { ...tenant, organizationId: 'org-2' },
    ),
    { instanceOf: NotFoundError },
  );
  await t.throwsAsync(
    commands.handle(
      checkoutSessionAggregate,
      session.id,
      { type: 'CancelCheckoutSession', reason: null },
      { ...tenant, environment: 'live' },
    ),
    { instanceOf: NotFoundError },
  );
  t.is((await eventStore.readStream(`checkout_session-${session.id}`)).length, 1);
});

test('events carry tenant, actor, correlation and the injected time', async (t) => {
  const eventStore = await store(t);
  const clock = createManualClock(Date.parse('2026-02-03T04:05:06.000Z'));
  const commands = createCommandHandler({ eventStore, clock });
  const session = sessionFixture();
  const result = await commands.handle(
    checkoutSessionAggregate,
    session.id,
    { type: 'CreateCheckoutSession', session },
    { ...tenant, correlationId: 'req-1', causationId: 'cause-1' },
  );
  const [event] = await eventStore.readStream(`checkout_session-${session.id}`);
  t.like(event!.metadata, {
    organizationId: 'org-1',
    environment: 'test',
    actor: 'test',
    correlationId: 'req-1',
    causationId: 'cause-1',
    occurredAt: '2026-02-03T04:05:06.000Z',
  });
  t.is(result.position, event!.position);
  const again = await commands.handle(
    checkoutSessionAggregate,
    session.id,
    { type: 'CreateCheckoutSession', session },
    tenant,
  );
  t.is(again.position, null);
  t.deepEqual(again.events, []);
});

/** A session create against a store that counts its stream reads. */
async function readCountedCreate(t: import('ava').ExecutionContext) {
  const eventStore = await store(t);
  const counting = readCountingStore(eventStore);
  const commands = createCommandHandler({ eventStore: counting, clock: createManualClock() });
  const session = sessionFixture();
  const create = { type: 'CreateCheckoutSession' as const, session };
  return { eventStore, reads: () => counting.reads.length, commands, session, create };
}

test('assumeNew: a new record is written without reading its stream; one that exists after all is read and decided again, its tenant checked', async (t) => {
  const { eventStore, reads, commands, session, create } = await readCountedCreate(t);
  const created = await commands.handle(checkoutSessionAggregate, session.id, create, { ...tenant, assumeNew: true });
  t.is(reads(), 0, 'the stream was not read');
  t.is(created.events.length, 1);

  // Wrong about it: the append conflicts, the stream is read, and the create decides nothing this time.
  const again = await commands.handle(checkoutSessionAggregate, session.id, create, { ...tenant, assumeNew: true });
  t.is(reads(), 1);
  t.deepEqual(again.events, []);
  t.true(again.existed);
  t.is((await eventStore.readStream(`checkout_session-${session.id}`)).length, 1);

  // Another tenant assuming it new meets the same conflict, then the tenant check.
  await t.throwsAsync(
    commands.handle(checkoutSessionAggregate, session.id, create, {
      ...tenant,
      organizationId: 'org-2',
      assumeNew: true,
    }),
    { instanceOf: NotFoundError },
  );
  t.is((await eventStore.readStream(`checkout_session-${session.id}`)).length, 1);
});

test('a record the caller has just loaded is decided on without reading its stream again; a stale one conflicts and is read and decided again', async (t) => {
  const { eventStore, reads, commands, session, create } = await readCountedCreate(t);
  const empty = await commands.load(checkoutSessionAggregate, session.id, tenant);
  t.is(reads(), 1);
  const created = await commands.handle(checkoutSessionAggregate, session.id, create, tenant, empty);
  t.is(reads(), 1, 'decided on the record given');
  t.is(created.events.length, 1);

  // The same read, now stale: the append conflicts, the stream is read, and the create decides nothing.
  const again = await commands.handle(checkoutSessionAggregate, session.id, create, tenant, empty);
  t.is(reads(), 2);
  t.deepEqual(again.events, []);
  t.is((await eventStore.readStream(`checkout_session-${session.id}`)).length, 1);
});
