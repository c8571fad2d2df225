import test from 'ava';
import type { CommandHandler } from '../actors/command-handler.ts';
import { EXPIRY_TIMER } from '../projections/checkout-sessions.projection.ts';
import { COLLECTIONS, type TimerDoc } from '../projections/collections.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import type { Collection } from '../read-store/read-store.ts';
import { createManualClock } from '../shared/clock.ts';
import { checkoutSessionTimerHandlers } from './checkout-session-timers.ts';
import { createTimerRunner, NOT_YET_RETRY_MS } from './timer-runner.ts';

const T0 = Date.parse('2026-06-01T10:00:00.000Z');
const SECOND = 1000;

/** Lets the runner's promise chain settle (it runs on promises, not on time). */
const settle = async (): Promise<void> => {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** A read store with the sessions `put` adds, each with an expiry timer due at T0. */
function expiringSessions() {
  const store = createEmbeddedReadStore({});
  const timers = store.collection<TimerDoc>(COLLECTIONS.timers);
  const sessions = store.collection<{ _id: string; expiresAt: string; addresses: { network: string }[] }>(COLLECTIONS.checkoutSessions);
  const expiresAt = new Date(T0).toISOString();
  const put = async (id: string, networks: string[]) => {
    await sessions.put({ _id: id, expiresAt, addresses: networks.map((network) => ({ network })) });
    await timers.put({ _id: `${EXPIRY_TIMER}:${id}`, kind: EXPIRY_TIMER, recordId: id, organizationId: 'org', environment: 'test', fireAt: T0 });
  };
  return { store, timers, put };
}

/** Expiring a session records it and removes its timer, as the expiry's events would. */
function expiringCommands(timers: Collection<TimerDoc>, expire: (id: string) => void): CommandHandler {
  return {
    async handle(aggregate, id, _command, _ctx) {
      expire(id);
      await timers.delete(`${EXPIRY_TIMER}:${id}`);
      return { state: aggregate.initialState(), events: [], position: 1n, existed: true };
    },
    load: () => Promise.reject(new Error('not used')),
  };
}

test('a session does not expire until the followers of its networks have read past its expiresAt; other networks and sessions are not held up', async (t) => {
  const clock = createManualClock(T0);
  const { store, timers, put } = expiringSessions();
  await put('cs_evm', ['test', 'sepolia']);
  await put('cs_test_rail', ['test']);
  await put('cs_no_address', []);

  const expired: { id: string; at: number }[] = [];
  const commands = expiringCommands(timers, (id) => expired.push({ id, at: clock.now() }));
  // Only sepolia has a follower in this process; it has read nothing since it started.
  let sepoliaCaughtUpAt: number | null = null;
  const asked: number[] = [];
  const readThrough = (network: string): number | null | undefined => {
    if (network !== 'sepolia') return undefined;
    asked.push(clock.now());
    return sepoliaCaughtUpAt;
  };
  const lines: string[] = [];
  const runner = createTimerRunner({
    clock, readStore: store, projections: { waitFor: async () => {}, onAdvanced: () => () => {} },
    handlers: checkoutSessionTimerHandlers(commands, { readStore: store, readThrough, matcherDrained: async () => true }), log: (line) => lines.push(line),
  });
  runner.start();
  t.teardown(() => runner.stop());
  await settle();
  t.deepEqual(expired.map((e) => e.id).sort(), ['cs_no_address', 'cs_test_rail'], 'sessions without a followed network expire at once');
  t.deepEqual(asked, [T0]);

  // The follower catches up to a head it read before the expiry: still not enough.
  sepoliaCaughtUpAt = T0 - SECOND;
  clock.advanceBy(NOT_YET_RETRY_MS - 1);
  await settle();
  t.deepEqual(asked, [T0]);
  clock.advanceBy(1);
  await settle();
  t.deepEqual(asked, [T0, T0 + NOT_YET_RETRY_MS], 'tried again on the clock');
  t.is(expired.length, 2);

  // It reads a head after the expiry and says so: the session expires at once, not a minute later.
  sepoliaCaughtUpAt = T0 + NOT_YET_RETRY_MS + SECOND;
  clock.advanceBy(2 * SECOND);
  runner.retryWaiting();
  await settle();
  t.deepEqual(expired.at(-1), { id: 'cs_evm', at: T0 + NOT_YET_RETRY_MS + 2 * SECOND });
  t.deepEqual(await timers.find({}), []);
  t.deepEqual(lines, [], 'waiting for a follower is no failure: nothing logged');
});

test('a session does not expire while the matcher has not handled every chain message published so far; asked once per pass once it has', async (t) => {
  const clock = createManualClock(T0);
  const { store, timers, put } = expiringSessions();
  await put('cs_a', ['sepolia']);
  await put('cs_b', ['sepolia', 'test']);
  await put('cs_test_rail', ['test']);

  const expired: string[] = [];
  const commands = expiringCommands(timers, (id) => expired.push(id));
  // The sepolia follower has read past the expiry (it published a transfer first), but the matcher
  // has not handled that transfer yet.
  const readThrough = (network: string): number | null | undefined => (network === 'sepolia' ? T0 + SECOND : undefined);
  let drained = false;
  let askedMatcher = 0;
  const matcherDrained = async (): Promise<boolean> => {
    askedMatcher += 1;
    return drained;
  };
  const runner = createTimerRunner({
    clock, readStore: store, projections: { waitFor: async () => {}, onAdvanced: () => () => {} },
    handlers: checkoutSessionTimerHandlers(commands, { readStore: store, readThrough, matcherDrained }), log: () => {},
  });
  runner.start();
  t.teardown(() => runner.stop());
  await settle();
  t.deepEqual(expired, ['cs_test_rail'], 'a session without a followed network does not ask the matcher');
  t.is(askedMatcher, 2);

  // The matcher handled the transfer (it calls retryWaiting): both sessions expire at once, on one question.
  drained = true;
  runner.retryWaiting();
  await settle();
  t.deepEqual(expired.sort(), ['cs_a', 'cs_b', 'cs_test_rail']);
  t.is(askedMatcher, 3);
  t.deepEqual(await timers.find({}), []);
});
