import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { writeRealisticLog } from '../../bench/support/realistic-log.ts';
import { writeEveryRecordLog } from '../../test/support/every-record-log.ts';
import type { EventStore } from '../event-store/event-store.ts';
import { createSqliteEventStore } from '../event-store/sqlite-event-store.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import type { Collection, ReadDocument, ReadStore } from '../read-store/read-store.ts';
import { createSqliteReadStore } from '../read-store/sqlite-read-store.ts';
import { createManualClock } from '../shared/clock.ts';
import { ALL_PROJECTIONS, READ_MODEL_INDEXES } from './all-projections.ts';
import { createProjectionRunner } from './projection-runner.ts';
import type { Projection } from './projection.ts';

/**
 * The runner applies the log in batches, and a batch that fails partway (a projection or a store
 * write throws) is not rolled back: the runner tries it again from the checkpoint, over what it
 * already wrote. Every projection must bear that. These tests rebuild the read models of a log
 * that goes through nearly every event type with the real runner and its retries, batches failing
 * after each of their document writes in turn, or partway and then after all of their events, and
 * compare them with a clean rebuild.
 */

const COLLECTION_NAMES = [...new Set(ALL_PROJECTIONS.flatMap((projection) => projection.collections))];

/**
 * One document write (put or delete) within a batch attempt: its batch (from 0), the attempt (from
 * 1), its place in the attempt (from 1), and where it came from: the event's log position, the
 * projection (its place in the list) and which of that projection's writes for the event it is.
 */
type Write = { batch: number; attempt: number; index: number; position: bigint; projection: number; nth: number };

/** Whether the batch attempt fails right after this write; `writes` is how many its batch made in a clean rebuild. */
type FailurePlan = (write: Write, writes: number) => boolean;

/**
 * `store`, and the projections to run over it, whose document writes within a batch (the
 * runner's `atomically`) go through and then throw where `plan` says: what the batch wrote stays.
 * `writes` lists, per batch, how many documents its successful attempt wrote.
 */
function failingStore(store: ReadStore, plan: FailurePlan, cleanWrites: readonly number[] = []) {
  let batch = 0;
  let attempt = 1;
  let index = 0;
  let inBatch = false;
  let from = { position: 0n, projection: -1, nth: 0 };
  const writes: number[] = [];
  let failures = 0;
  const projections = ALL_PROJECTIONS.map(
    (projection, i): Projection => ({
      ...projection,
      async apply(event, readStore) {
        from = { position: event.position, projection: i, nth: 0 };
        await projection.apply(event, readStore);
      },
    }),
  );
  const wrote = () => {
    if (!inBatch) return;
    index++;
    from.nth++;
    if (plan({ batch, attempt, index, ...from }, cleanWrites[batch] ?? 0)) {
      failures++;
      throw new Error(`injected failure after write ${index} of batch ${batch} (attempt ${attempt})`);
    }
  };
  const collections = new Map<string, Collection<ReadDocument>>();
  const wrapped: ReadStore = {
    ...store,
    collection<T extends ReadDocument>(name: string): Collection<T> {
      let collection = collections.get(name);
      if (!collection) {
        const inner = store.collection<ReadDocument>(name);
        collection = {
          ...inner,
          put: async (doc) => {
            await inner.put(doc);
            wrote();
          },
          delete: async (id) => {
            await inner.delete(id);
            wrote();
          },
        };
        collections.set(name, collection);
      }
      return collection as unknown as Collection<T>;
    },
    async atomically(work) {
      inBatch = true;
      index = 0;
      try {
        const result = await store.atomically(work);
        writes[batch] = index;
        batch++;
        attempt = 1;
        return result;
      } catch (error) {
        attempt++;
        throw error;
      } finally {
        inBatch = false;
      }
    },
  };
  return { store: wrapped, projections, writes, failures: () => failures };
}

/** Whether write `a` comes after write `b` in a batch: by log position, then projection, then its order there. */
const after = (a: Write, b: Write) =>
  a.position !== b.position
    ? a.position > b.position
    : a.projection !== b.projection
      ? a.projection > b.projection
      : a.nth > b.nth;

/**
 * Each attempt of a batch fails right after its first write beyond the one the previous attempt
 * failed after (the first attempt after its first write), until an attempt writes nothing beyond
 * it: the batch is retried after each of its writes in turn, whatever an attempt skips as done.
 */
function afterEachWrite(): FailurePlan {
  let last: Write | null = null;
  return (write) => {
    if (last && write.batch !== last.batch) last = null;
    if (last && !after(write, last)) return false;
    last = write;
    return true;
  };
}

/**
 * Builds the read models from the whole log with the real runner on a manual clock: a failed pass
 * is retried (from the checkpoint) when the clock reaches its retry time, until the head is processed.
 */
async function project(
  eventStore: EventStore,
  readStore: ReadStore,
  batchSize: number,
  projections: Projection[] = ALL_PROJECTIONS,
): Promise<void> {
  const clock = createManualClock();
  const head = await eventStore.headPosition();
  const runner = createProjectionRunner({
    eventStore,
    readStore,
    projections,
    batchSize,
    clock,
    log: () => {},
  });
  try {
    // Rejects when its first pass failed: the retries follow on the clock.
    await runner.start().catch(() => {});
    for (let turns = 0, at = runner.position(); runner.position() !== head; turns++) {
      if (runner.position() !== at) [turns, at] = [0, runner.position()];
      if (turns > 1000) throw new Error(`the runner does not get past ${at}: ${runner.health().failing?.error}`);
      clock.advanceBy(60_000);
      await new Promise((resolve) => setImmediate(resolve));
    }
  } finally {
    await runner.stop();
  }
}

/**
 * Placed after every projection: throws once at each of `positions`, once every projection has
 * applied that event (a batch ending there is then retried whole).
 */
function throwingOnceAt(positions: Iterable<bigint>) {
  const left = new Set(positions);
  const projection: Projection = {
    name: 'throwing_once',
    collections: [],
    async apply(event) {
      if (left.delete(event.position)) throw new Error(`injected failure after event ${event.position}`);
    },
  };
  return { projection, left };
}

/** As Weir opens its in-memory read models. */
const newEmbeddedStore = () => createEmbeddedReadStore({ ...READ_MODEL_INDEXES, writes: 'trusted' });

type Contents = Record<string, Map<string, ReadDocument>>;

async function contents(store: ReadStore): Promise<Contents> {
  const all: Contents = {};
  for (const name of COLLECTION_NAMES)
    all[name] = new Map((await store.collection(name).find({})).map((doc) => [doc._id, doc]));
  return all;
}

/** Each document that differs, as `collection id: fields` (or missing / unexpected). */
function differences(actual: Contents, expected: Contents): string[] {
  const found: string[] = [];
  for (const name of COLLECTION_NAMES) {
    const want = expected[name]!;
    for (const [id, doc] of actual[name]!) {
      const wanted = want.get(id);
      if (!wanted) found.push(`${name} ${id}: unexpected`);
      else {
        const fields = [...new Set([...Object.keys(doc), ...Object.keys(wanted)])].filter(
          (key) => JSON.stringify(doc[key]) !== JSON.stringify(wanted[key]),
        );
        if (fields.length > 0) found.push(`${name} ${id}: ${fields.join(', ')} differ`);
      }
    }
    for (const id of want.keys()) if (!actual[name]!.has(id)) found.push(`${name} ${id}: missing`);
  }
  return found;
}

/** A small deterministic spread of numbers in [1, n]. */
const pick = (seed: number, n: number) => (n <= 0 ? 1 : 1 + (((seed * 2_654_435_761) >>> 0) % n));

// The log, once: the realistic one (merchants, sessions with every payment outcome, webhook
// attempts), then the rest of the record kinds.
const world = (async () => {
  const written = createSqliteEventStore({ path: ':memory:' });
  await writeRealisticLog({ eventStore: written, targetEvents: 600, organizations: 2, sessionsPerRound: 30 });
  await writeEveryRecordLog({ eventStore: written, clock: createManualClock(Date.parse('2026-06-01T00:00:00.000Z')) });
  const events = await written.readAll(null, 100_000);
  await written.close();
  // Read from memory: thousands of retries each read their batch again.
  const next = new Map(events.map((event, i) => [event.position, i + 1]));
  const eventStore: EventStore = {
    ...written,
    readAll: async (after, limit) => {
      const from = after === null ? 0 : next.get(after)!;
      return events.slice(from, from + limit);
    },
    headPosition: async () => events.at(-1)?.position ?? null,
    onAppended: () => () => {},
  };
  return { eventStore, events, types: new Set(events.map((event) => event.type)) };
})();

/** A clean rebuild on the embedded store, with how many documents each batch of `batchSize` writes. */
async function cleanRebuild(batchSize: number) {
  const { eventStore } = await world;
  const clean = failingStore(newEmbeddedStore(), () => false);
  await project(eventStore, clean.store, batchSize, clean.projections);
  return { contents: await contents(clean.store), writes: clean.writes };
}

/**
 * The event types the log holds, so a change to its writers cannot quietly narrow what is tested:
 * every type a projection reads (the audit trail reads them all), but for the claims of invoice
 * numbers and promotion codes, which no read model keeps.
 */
const EVENT_TYPES = `
  ApiKeyDeleted ApiKeyIssued ApiKeyRegenerated AuditCheckpointSigned BrandingUpdated
  BusinessDetailsUpdated CardProcessorKeysRemoved CardProcessorKeysSet CheckoutSessionCanceled
  CheckoutSessionCompleted CheckoutSessionCreated CheckoutSessionExpired CheckoutSessionPartiallyPaid
  CouponArchived CouponCreated CouponDisabled CouponEnabled CouponExpired CouponLimitReached
  CouponUpdated CustomerCreated CustomerDeleted CustomerUpdated CustomerUpdatedFromCheckout
  DashboardSessionActive DashboardSessionEnded DashboardSessionStarted DiscountApplied FirstBillDiscounted FundsSwept
  InvoiceCreated InvoiceDeleted InvoiceFinalized InvoiceMarkedAsPaid InvoiceMarkedUncollectible
  InvoicePaid InvoicePartialPaymentReceived InvoicePaymentAttemptStarted InvoicePaymentFailed
  InvoicePaymentReceivedAfterPaid InvoiceReminderSent
  InvoiceReminderSkipped InvoiceSent InvoiceSettingUpdated InvoiceUpdated InvoiceVoided
  LatePaymentReceived MailDeliveryFailed MailSent NextRecurringInvoiceScheduled OrganizationCreated
  OverpaymentReceived PaymentConfirmed PaymentDetected PaymentLinkActivated PaymentLinkCreated
  PaymentLinkDeactivated PaymentLinkDeleted PaymentLinkUpdated PaymentMarkedRefunded
  PaymentMethodSelected PaymentReceiptRequested PaymentSettingUpdated PaymentWithdrawn PriceCreated
  PriceUpdated ProductCreated ProductDeleted ProductUpdated PromotionCodeExpired
  PromotionCodeLimitReached PromotionCodeRedeemed PromotionCodeRedemptionReleased
  RenewalInvoiceDeleted RenewalInvoiceFinalized RenewalInvoiceIssued RenewalInvoiceNotFinalized RenewalInvoiceVoided
  RenewalPaid RenewalPaymentMissed
  SubscriptionCancelRevoked SubscriptionCancelScheduled SubscriptionCanceled SubscriptionCreated
  SubscriptionIncompleteExpired SubscriptionMarkedUnpaid SubscriptionPaused SubscriptionResumed
  SubscriptionStarted SweepBroadcast SweepDropped SweepLookUpEnded TaxRateCreated TaxRateUpdated
  TeamTwoFactorRequirementChanged TransferAlreadyReconciled UserCreated UserEmailClaimed
  UserEmailReleased UserInviteAccepted UserInviteCreated UserInviteResent UserInviteRevoked
  UserPasswordChanged UserRecoveryCodeUsed UserRecoveryCodesRenewed UserRemoved UserRoleChanged
  UserTwoFactorCodeUsed UserTwoFactorDisabled UserTwoFactorEnabled WebhookDeliveryAttemptFailed
  WebhookDeliveryCanceled WebhookDeliveryFailed WebhookDeliveryResent WebhookDeliverySucceeded
  WebhookEndpointCreated WebhookEndpointDeleted WebhookEndpointSecretRegenerated
  WebhookEndpointTestRequested WebhookEndpointUpdated WithdrawalAddressAdded
  WithdrawalAddressMarkedDefault WithdrawalAddressRemoved WithdrawalAddressUpdated
`
  .trim()
  .split(/\s+/);

test('the log goes through the event types the projections read', async (t) => {
  const { types } = await world;
  t.deepEqual(
    EVENT_TYPES.filter((type) => !types.has(type)),
    [],
  );
});

test('batches retried after each of their document writes in turn leave what a clean rebuild leaves', async (t) => {
  const { eventStore } = await world;
  const batchSize = 10;
  const expected = await cleanRebuild(batchSize);
  const faulty = failingStore(newEmbeddedStore(), afterEachWrite());
  await project(eventStore, faulty.store, batchSize, faulty.projections);
  // Every write of a clean rebuild but those a retry finds done (and skips) is a failure point.
  t.true(faulty.failures() > expected.writes.reduce((sum, writes) => sum + writes, 0) / 2);
  t.deepEqual(differences(await contents(faulty.store), expected.contents), []);
});

test('whole batches applied, then retried, on the embedded and the SQLite read store, leave what a clean rebuild leaves', async (t) => {
  const { eventStore } = await world;
  // The runner's own batch size: a retried batch meets the later state of many records.
  const batchSize = 250;
  const expected = await cleanRebuild(batchSize);
  const positions = (await world).events.map((event) => event.position);
  const batchEnds = positions.filter((_position, i) => i % batchSize === batchSize - 1 || i === positions.length - 1);
  const directory = await mkdtemp(join(tmpdir(), 'weir-retried-batches-'));
  t.teardown(() => rm(directory, { recursive: true, force: true }));
  const stores: [string, ReadStore][] = [
    ['embedded', newEmbeddedStore()],
    [
      'sqlite',
      createSqliteReadStore({ path: join(directory, 'read-models.sqlite3'), ...READ_MODEL_INDEXES, writes: 'trusted' }),
    ],
  ];
  for (const [name, store] of stores) {
    // Each batch fails first after a write somewhere inside it, then after its last event.
    const faulty = failingStore(
      store,
      (write, writes) => write.attempt === 1 && write.index === pick(write.batch + 1, writes),
      expected.writes,
    );
    const throwing = throwingOnceAt(batchEnds);
    await project(eventStore, faulty.store, batchSize, [...faulty.projections, throwing.projection]);
    t.is(faulty.failures(), batchEnds.length, name);
    t.is(throwing.left.size, 0, name);
    t.deepEqual(differences(await contents(faulty.store), expected.contents), [], name);
    await store.close();
  }
});
