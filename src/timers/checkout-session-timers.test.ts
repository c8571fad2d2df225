import test from 'ava';
import type { CommandHandler } from '../actors/command-handler.ts';
import { EXPIRY_TIMER } from '../projections/checkout-sessions.projection.ts';
import { COLLECTIONS, type TimerDoc } from '../projections/collections.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import type { Collection } from '../read-store/read-store.ts';
import { createManualClock } from '../shared/clock.ts';
import { checkoutSessionTimerHandlers } from './checkout-session-timers.ts';
import { fakeFollowers, HOUR, SECOND, settle, startGatedTimers, T0 } from './gated-timers.fixture.ts';
import { NOT_YET_RETRY_MS } from './timer-runner.ts';

/** A read store with the sessions `put` adds, each with an expiry timer due at T0. */
function expiringSessions() {
  const store = createEmbeddedReadStore({});
  const timers = store.collection<TimerDoc>(COLLECTIONS.timers);
  const sessions = store.collection<{ _id: string; expiresAt: string; addresses: { network: string }[] }>(
    COLLECTIONS.checkoutSessions,
  );
  const expiresAt = new Date(T0).toISOString();
  const put = async (id: string, networks: string[]) => {
    await sessions.put({ _id: id, expiresAt, addresses: networks.map((network) => ({ network })) });
    await timers.put({
      _id: `${EXPIRY_TIMER}:${id}`,
      kind: EXPIRY_TIMER,
      recordId: id,
      organizationId: 'org',
      environment: 'test',
      fireAt: T0,
    });
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
  const followers = fakeFollowers(['sepolia']);
  const asked: number[] = [];
  const readThrough = (network: string) => {
    if (network === 'sepolia') asked.push(clock.now());
    return followers.readThrough(network);
  };
  const { runner, lines } = startGatedTimers(t, {
    clock,
    readStore: store,
    readThrough,
    handlers: (gate) => checkoutSessionTimerHandlers(commands, { readStore: store, gate }),
  });
  await settle();
  t.deepEqual(
    expired.map((e) => e.id).sort(),
    ['cs_no_address', 'cs_test_rail'],
    'sessions without a followed network expire at once',
  );
  t.deepEqual(asked, [T0]);

  // The follower catches up to a head it read before the expiry: still not enough.
  followers.read('sepolia', T0 - SECOND, 100n);
  clock.advanceBy(NOT_YET_RETRY_MS - 1);
  await settle();
  t.deepEqual(asked, [T0]);
  clock.advanceBy(1);
  await settle();
  t.deepEqual(asked, [T0, T0 + NOT_YET_RETRY_MS], 'tried again on the clock');
  t.is(expired.length, 2);

  // It reads a head after the expiry and says so: the session expires at once, not a minute later.
  followers.read('sepolia', T0 + NOT_YET_RETRY_MS + SECOND, 105n);
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
  const followers = fakeFollowers(['sepolia']);
  followers.read('sepolia', T0 + SECOND, 100n);
  let drained = false;
  let askedMatcher = 0;
  const matcherDrained = async (): Promise<boolean> => {
    askedMatcher += 1;
    return drained;
  };
  const { runner } = startGatedTimers(t, {
    clock,
    readStore: store,
    readThrough: followers.readThrough,
    matcherDrained,
    handlers: (gate) => checkoutSessionTimerHandlers(commands, { readStore: store, gate }),
  });
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

test('while a follower stays behind, its sessions expire once the longest wait past their expiresAt is over, with one log line for its network', async (t) => {
  const clock = createManualClock(T0);
  const { store, timers, put } = expiringSessions();
  for (const id of ['cs_1', 'cs_2', 'cs_3']) await put(id, ['sepolia']);

  const expired: { id: string; at: number }[] = [];
  const commands = expiringCommands(timers, (id) => expired.push({ id, at: clock.now() }));
  // The follower read a head a minute before the expiry; then its endpoint went down.
  const followers = fakeFollowers(['sepolia']);
  followers.read('sepolia', T0 - 60 * SECOND, 4242n);
  const { lines } = startGatedTimers(t, {
    clock,
    readStore: store,
    readThrough: followers.readThrough,
    maxWaitMs: HOUR,
    handlers: (gate) => checkoutSessionTimerHandlers(commands, { readStore: store, gate }),
  });
  await settle();
  t.deepEqual(expired, []);

  // Still held on the retry that comes exactly at the longest wait...
  clock.advanceTo(T0 + HOUR);
  await settle();
  t.deepEqual(expired, []);
  t.deepEqual(lines, []);
  // ...and let go on the next one, past it.
  clock.advanceBy(NOT_YET_RETRY_MS);
  await settle();
  t.deepEqual(expired.map((e) => e.id).sort(), ['cs_1', 'cs_2', 'cs_3']);
  t.true(expired.every((e) => e.at === T0 + HOUR + NOT_YET_RETRY_MS));
  t.deepEqual(await timers.find({}), []);
  t.is(lines.length, 1, lines.join('\n'));
  t.regex(lines[0]!, /^\[timers\] sepolia: .*2026-06-01T09:59:00\.000Z.*4242/);
});
