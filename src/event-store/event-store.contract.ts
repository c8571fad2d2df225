import { randomUUID } from 'node:crypto';
import type { ExecutionContext, TestFn } from 'ava';
import type { JsonObject } from '../shared/json.ts';
import { chainHash, chainHashV1, contentOf } from './event-chain.ts';
import {
  WrongExpectedRevisionError,
  type ChainedEvent,
  type EventMetadata,
  type EventStore,
  type NewEvent,
  type RecordedEvent,
} from './event-store.ts';

export type EventStoreUnderTest = { store: EventStore; cleanup(): Promise<void> };

/**
 * The behaviour every EventStore adapter must have. Each test gets its own store from `factory`.
 *
 * The tests hold on a shared log too (a KurrentDB server used by other tests at the same time): they
 * write to streams with unique names and, when they read the whole log, only look at their own
 * events, so they never assume the log is empty or that nobody else appends.
 */
export function eventStoreContract(test: TestFn, name: string, factory: () => Promise<EventStoreUnderTest>): void {
  const openStore = async (t: ExecutionContext): Promise<EventStore> => {
    const { store, cleanup } = await factory();
    t.teardown(cleanup);
    return store;
  };

  test(`${name}: an append reads back with its ids, data, metadata and revisions 0..n`, async (t) => {
    const store = await openStore(t);
    const streamId = newStreamId('checkout_session');
    const events = [
      newEvent('CheckoutSessionCreated', {
        amount: '100000000',
        currency: 'usdc',
        lineItems: [{ name: 'Tea', quantity: 2 }],
      }),
      newEvent('PaymentDetected', { txHash: `0x${'ab'.repeat(32)}`, confirmations: 0, final: false, memo: null }),
      newEvent('CheckoutSessionCompleted', { note: 'unicode ✓ “quotes” and \\ backslash \n newline' }),
    ];

    const result = await store.append(streamId, events, 'no_stream');
    t.is(result.nextExpectedRevision, 2);

    const recorded = await store.readStream(streamId);
    t.deepEqual(
      withoutPositions(recorded),
      events.map((event, revision) => ({ ...event, streamId, revision })),
    );
    t.is(typeof recorded[0]?.position, 'bigint');
    assertStrictlyIncreasing(
      t,
      recorded.map((event) => event.position),
    );
    t.is(recorded.at(-1)?.position, result.position);
  });

  test(`${name}: events read back are frozen, data and metadata through, by readStream and readAll alike`, async (t) => {
    // A module is strict code: a write to a frozen object throws rather than doing nothing.
    const store = await openStore(t);
    const before = await store.headPosition();
    const streamId = newStreamId('checkout_session');
    await store.append(
      streamId,
      [newEvent('CheckoutSessionCreated', { amount: '100', lineItems: [{ name: 'Tea', quantity: 2 }] })],
      'no_stream',
    );
    const [streamed] = await store.readStream(streamId);
    const logged = (await readAllAfter(store, before)).find((event) => event.streamId === streamId);
    for (const event of [streamed!, logged!]) {
      const lineItems = event.data.lineItems as JsonObject[];
      t.throws(() => {
        (event as { type: string }).type = 'Changed';
      });
      t.throws(() => {
        event.data.amount = '1';
      });
      t.throws(() => {
        lineItems[0]!.quantity = 3;
      });
      t.throws(() => {
        lineItems.push({ name: 'Cake' });
      });
      t.throws(() => {
        (event.metadata as { actor: string }).actor = 'someone else';
      });
    }
    // A second read gives the same values, nothing of a reader's attempt.
    t.is((await store.readStream(streamId))[0]!.data.amount, '100');
  });

  test(`${name}: positions increase strictly across streams in append order`, async (t) => {
    const store = await openStore(t);
    const first = newStreamId('invoice');
    const second = newStreamId('invoice');

    const a = await store.append(first, [newEvent('InvoiceCreated'), newEvent('InvoiceSent')], 'no_stream');
    const b = await store.append(second, [newEvent('InvoiceCreated')], 'no_stream');
    const c = await store.append(first, [newEvent('InvoicePaid'), newEvent('InvoiceClosed')], 1);

    t.is(c.nextExpectedRevision, 3);
    t.true(a.position < b.position);
    t.true(b.position < c.position);

    const firstStream = await store.readStream(first);
    const secondStream = await store.readStream(second);
    t.deepEqual(
      firstStream.map((event) => event.revision),
      [0, 1, 2, 3],
    );
    const inAppendOrder = [...firstStream.slice(0, 2), ...secondStream, ...firstStream.slice(2)];
    assertStrictlyIncreasing(
      t,
      inAppendOrder.map((event) => event.position),
    );
    t.is(firstStream[1]?.position, a.position);
    t.is(secondStream[0]?.position, b.position);
    t.is(firstStream[3]?.position, c.position);
  });

  test(`${name}: readStream of an unknown stream is empty`, async (t) => {
    const store = await openStore(t);
    t.deepEqual(await store.readStream(newStreamId('nothing')), []);
  });

  test(`${name}: no_stream rejects when the stream exists`, async (t) => {
    const store = await openStore(t);
    const streamId = newStreamId('subscription');
    await store.append(streamId, [newEvent('SubscriptionCreated')], 'no_stream');

    const error = await t.throwsAsync(store.append(streamId, [newEvent('SubscriptionCreated')], 'no_stream'), {
      instanceOf: WrongExpectedRevisionError,
    });
    t.is(error?.streamId, streamId);
    t.is(error?.expected, 'no_stream');
    t.is(error?.actual, 0);
  });

  test(`${name}: a stale or wrong expected revision rejects with the stream and its actual revision`, async (t) => {
    const store = await openStore(t);
    const streamId = newStreamId('payment_link');
    await store.append(streamId, [newEvent('PaymentLinkCreated'), newEvent('PaymentLinkUpdated')], 'no_stream');

    const stale = await t.throwsAsync(store.append(streamId, [newEvent('PaymentLinkDisabled')], 0), {
      instanceOf: WrongExpectedRevisionError,
    });
    t.is(stale?.streamId, streamId);
    t.is(stale?.expected, 0);
    t.is(stale?.actual, 1);

    const ahead = await t.throwsAsync(store.append(streamId, [newEvent('PaymentLinkDisabled')], 5), {
      instanceOf: WrongExpectedRevisionError,
    });
    t.is(ahead?.actual, 1);

    const missingStreamId = newStreamId('payment_link');
    const missing = await t.throwsAsync(store.append(missingStreamId, [newEvent('PaymentLinkCreated')], 0), {
      instanceOf: WrongExpectedRevisionError,
    });
    t.is(missing?.streamId, missingStreamId);
    t.is(missing?.actual, 'no_stream');

    const current = await store.append(streamId, [newEvent('PaymentLinkDisabled')], 1);
    t.is(current.nextExpectedRevision, 2);
  });

  test(`${name}: 'any' appends whatever the stream's state`, async (t) => {
    const store = await openStore(t);
    const streamId = newStreamId('webhook_delivery');

    const created = await store.append(streamId, [newEvent('WebhookDeliveryScheduled')], 'any');
    t.is(created.nextExpectedRevision, 0);
    const appended = await store.append(
      streamId,
      [newEvent('WebhookDeliveryAttempted'), newEvent('WebhookDelivered')],
      'any',
    );
    t.is(appended.nextExpectedRevision, 2);
    t.deepEqual(
      (await store.readStream(streamId)).map((event) => event.type),
      ['WebhookDeliveryScheduled', 'WebhookDeliveryAttempted', 'WebhookDelivered'],
    );
  });

  test(`${name}: a rejected append writes none of its events`, async (t) => {
    const store = await openStore(t);
    const streamId = newStreamId('checkout_session');
    const created = await store.append(streamId, [newEvent('CheckoutSessionCreated')], 'no_stream');
    await store.append(streamId, [newEvent('PaymentDetected')], 0);

    const rejected = [newEvent('CheckoutSessionExpired'), newEvent('CheckoutSessionClosed'), newEvent('Noted')];
    await t.throwsAsync(store.append(streamId, rejected, 0), { instanceOf: WrongExpectedRevisionError });

    t.deepEqual(
      (await store.readStream(streamId)).map((event) => event.type),
      ['CheckoutSessionCreated', 'PaymentDetected'],
    );
    const rejectedIds = new Set(rejected.map((event) => event.id));
    const logSinceCreated = await readAllAfter(store, created.position);
    t.false(logSinceCreated.some((event) => rejectedIds.has(event.id)));
  });

  test(`${name}: an exact retry of an append does not duplicate its events`, async (t) => {
    const store = await openStore(t);
    const streamId = newStreamId('invoice');
    const events = [newEvent('InvoiceCreated'), newEvent('InvoiceSent')];
    const original = await store.append(streamId, events, 'no_stream');

    try {
      const retried = await store.append(streamId, events, 'no_stream');
      t.is(retried.nextExpectedRevision, original.nextExpectedRevision);
    } catch (error) {
      t.true(error instanceof WrongExpectedRevisionError, String(error));
    }
    t.deepEqual(
      (await store.readStream(streamId)).map((event) => event.id),
      events.map((event) => event.id),
    );
  });

  test(`${name}: readAll pages through the log with after and limit`, async (t) => {
    const store = await openStore(t);
    const before = await store.headPosition();
    const first = newStreamId('invoice');
    const second = newStreamId('invoice');
    const ours = new Set([first, second]);
    const appended = [
      newEvent('InvoiceCreated'),
      newEvent('InvoiceSent'),
      newEvent('InvoiceCreated'),
      newEvent('InvoicePaid'),
      newEvent('InvoiceClosed'),
    ];
    await store.append(first, appended.slice(0, 2), 'no_stream');
    await store.append(second, appended.slice(2, 3), 'no_stream');
    await store.append(first, appended.slice(3), 1);

    const pageSizes: number[] = [];
    const seen: RecordedEvent[] = [];
    let after = before;
    for (let pages = 0; pages < 10_000; pages += 1) {
      const page = await store.readAll(after, 2);
      if (page.length === 0) break;
      pageSizes.push(page.length);
      seen.push(...page);
      after = page.at(-1)!.position;
    }

    t.true(
      pageSizes.every((size) => size >= 1 && size <= 2),
      `page sizes ${pageSizes.join(',')}`,
    );
    const positions = seen.map((event) => event.position);
    assertStrictlyIncreasing(t, positions);
    if (before !== null) t.true(positions.every((position) => position > before));
    const ourEvents = seen.filter((event) => ours.has(event.streamId));
    t.deepEqual(
      ourEvents.map((event) => event.id),
      appended.map((event) => event.id),
    );
    t.deepEqual(
      ourEvents.map((event) => `${event.streamId === first ? 'first' : 'second'}@${event.revision}`),
      ['first@0', 'first@1', 'second@0', 'first@2', 'first@3'],
    );
    t.deepEqual(withoutPositions(ourEvents), withoutPositions(await readStreamsInLogOrder(store, [first, second])));

    // `after` is exclusive: reading after our third event returns the fourth and fifth.
    const third = ourEvents[2]!;
    const afterThird = (await readAllAfter(store, third.position)).filter((event) => ours.has(event.streamId));
    t.deepEqual(
      afterThird.map((event) => event.id),
      [appended[3]!.id, appended[4]!.id],
    );

    t.deepEqual(await store.readAll(before, 0), []);
    t.true((await store.readAll(null, 1)).length === 1);
  });

  test(`${name}: headPosition follows the last append`, async (t) => {
    const store = await openStore(t);
    const streamId = newStreamId('subscription');
    const first = await store.append(streamId, [newEvent('SubscriptionCreated')], 'no_stream');
    const headAfterFirst = await store.headPosition();
    t.not(headAfterFirst, null);
    t.true(headAfterFirst! >= first.position);

    const second = await store.append(streamId, [newEvent('SubscriptionRenewed'), newEvent('SubscriptionRenewed')], 0);
    t.true(second.position > first.position);
    const headAfterSecond = await store.headPosition();
    t.true(headAfterSecond! >= second.position);
    const beyondHead = await store.readAll(headAfterSecond, 10);
    t.true(beyondHead.every((event) => event.position > headAfterSecond!));
  });

  test(`${name}: onAppended fires after an append and stops after unsubscribe`, async (t) => {
    const store = await openStore(t);
    const streamId = newStreamId('checkout_session');
    let calls = 0;
    let resolveCalled: () => void = () => undefined;
    const called = new Promise<void>((resolve) => {
      resolveCalled = resolve;
    });
    const unsubscribe = store.onAppended(() => {
      calls += 1;
      resolveCalled();
    });

    const before = await store.headPosition();
    await store.append(streamId, [newEvent('CheckoutSessionCreated')], 'no_stream');
    await withTimeout(called, 5000, 'onAppended listener was not called after an append');
    t.true((await readAllAfter(store, before)).some((event) => event.streamId === streamId));

    unsubscribe();
    const callsAtUnsubscribe = calls;
    await store.append(streamId, [newEvent('CheckoutSessionExpired')], 0);
    await delay(300);
    t.is(calls, callsAtUnsubscribe);
  });

  test(`${name}: every append links its events into the hash chain in log order`, async (t) => {
    const store = await openStore(t);
    const before = await store.headPosition();
    const first = newStreamId('invoice');
    const second = newStreamId('invoice');
    const delivery = newStreamId('webhook_delivery');
    await store.append(first, [newEvent('InvoiceCreated', { amount: '100' }), newEvent('InvoiceSent')], 'no_stream');
    await Promise.all([
      store.append(second, [newEvent('InvoiceCreated')], 'no_stream'),
      store.append(first, [newEvent('InvoicePaid', { note: 'ünïcode “quotes”' })], 1),
      store.append(delivery, [newEvent('WebhookDeliveryScheduled')], 'any'),
    ]);

    const chained = await readChainAfter(store, before);
    const ours = new Set([first, second, delivery]);
    t.is(chained.filter((event) => ours.has(event.content.streamId)).length, 5);
    // What the chain covers is what the log gives back (the link is never inside the event).
    t.deepEqual(
      chained.map((event) => [event.position, event.content]),
      (await readAllAfter(store, before)).map((event) => [event.position, contentOf(event)]),
    );
    assertChained(t, chained, ours);
    const head = await store.chain.head();
    if (head!.position === chained.at(-1)!.position) t.is(head!.hash, chained.at(-1)!.link!.hash);
  });

  test(`${name}: a rejected append leaves no gap in the chain`, async (t) => {
    const store = await openStore(t);
    const before = await store.headPosition();
    const streamId = newStreamId('checkout_session');
    await store.append(streamId, [newEvent('CheckoutSessionCreated')], 'no_stream');
    await t.throwsAsync(store.append(streamId, [newEvent('PaymentDetected'), newEvent('Noted')], 'no_stream'), {
      instanceOf: WrongExpectedRevisionError,
    });
    await store.append(streamId, [newEvent('PaymentDetected')], 0);
    const chained = await readChainAfter(store, before);
    t.is(chained.filter((event) => event.content.streamId === streamId).length, 2);
    assertChained(t, chained, new Set([streamId]));
  });

  test(`${name}: concurrent appends with one expected revision: exactly one wins`, async (t) => {
    const store = await openStore(t);
    const streamId = newStreamId('checkout_session');
    await store.append(streamId, [newEvent('CheckoutSessionCreated')], 'no_stream');

    const contenders = Array.from({ length: 5 }, (_, index) => newEvent('PaymentDetected', { contender: index }));
    const outcomes = await Promise.allSettled(contenders.map((event) => store.append(streamId, [event], 0)));

    const winners = outcomes.flatMap((outcome, index) => (outcome.status === 'fulfilled' ? [contenders[index]!] : []));
    t.is(winners.length, 1);
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected')
        t.true(outcome.reason instanceof WrongExpectedRevisionError, String(outcome.reason));
      else t.is(outcome.value.nextExpectedRevision, 1);
    }
    const recorded = await store.readStream(streamId);
    t.deepEqual(
      recorded.map((event) => event.id),
      [recorded[0]!.id, winners[0]!.id],
    );
  });
}

const newStreamId = (kind: string): string => `${kind}-${randomUUID()}`;

const testMetadata = (): EventMetadata => ({
  organizationId: 'org_contract',
  environment: 'test',
  actor: 'system:contract-test',
  correlationId: randomUUID(),
  causationId: randomUUID(),
  occurredAt: '2025-01-02T03:04:05.678Z',
});

const newEvent = (type: string, data: JsonObject = {}): NewEvent => ({
  id: randomUUID(),
  type,
  data,
  metadata: testMetadata(),
});

const withoutPositions = (events: RecordedEvent[]): Omit<RecordedEvent, 'position'>[] =>
  events.map(({ position: _position, ...rest }) => rest);

const assertStrictlyIncreasing = (t: ExecutionContext, positions: bigint[]): void => {
  for (let index = 1; index < positions.length; index += 1) {
    t.true(positions[index - 1]! < positions[index]!, `position ${positions[index]} after ${positions[index - 1]}`);
  }
};

/** Everything in the log after `after` (other writers' events included). */
const readAllAfter = async (store: EventStore, after: bigint | null): Promise<RecordedEvent[]> => {
  const seen: RecordedEvent[] = [];
  for (let cursor = after; ; ) {
    const page = await store.readAll(cursor, 500);
    if (page.length === 0) return seen;
    seen.push(...page);
    cursor = page.at(-1)!.position;
  }
};

const readChainAfter = async (store: EventStore, after: bigint | null): Promise<ChainedEvent[]> => {
  const seen: ChainedEvent[] = [];
  for (let cursor = after; ; ) {
    const page = await store.chain.read(cursor, 2);
    if (page.length === 0) return seen;
    seen.push(...page);
    cursor = page.at(-1)!.position;
  }
};

/**
 * Each event's hash is its content's after its `previous` (chain v2: the tenant tag of its metadata's
 * organization and environment hashed with it, never a v1 link), and each of our events follows the
 * event before it in the log when that one is ours too (on a shared log another process's append
 * may sit between two of ours; this process's stores take turns).
 */
const assertChained = (t: ExecutionContext, chained: ChainedEvent[], ourStreams: ReadonlySet<string>): void => {
  for (const [index, event] of chained.entries()) {
    if (!ourStreams.has(event.content.streamId)) continue;
    t.truthy(event.link, `event at ${event.position} carries a link`);
    t.is(event.link!.hash, chainHash(event.link!.previous, event.content), `hash at ${event.position}`);
    t.not(event.link!.hash, chainHashV1(event.link!.previous, event.content), `v1 hash at ${event.position}`);
    const earlier = chained[index - 1];
    if (earlier && ourStreams.has(earlier.content.streamId))
      t.is(event.link!.previous, earlier.link!.hash, `link at ${event.position}`);
  }
};

const readStreamsInLogOrder = async (store: EventStore, streamIds: string[]): Promise<RecordedEvent[]> => {
  const streams = await Promise.all(streamIds.map((streamId) => store.readStream(streamId)));
  return streams.flat().sort((a, b) => (a.position < b.position ? -1 : a.position > b.position ? 1 : 0));
};

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const withTimeout = async <T>(promise: Promise<T>, ms: number, message: string): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
};
