import test from 'ava';
import type { CommandHandler } from '../actors/command-handler.ts';
import { COLLECTIONS, type TimerDoc } from '../projections/collections.ts';
import { REMINDER_TIMER } from '../projections/invoice-reminder-timers.ts';
import { createEmbeddedReadStore } from '../read-store/embedded-read-store.ts';
import { createManualClock } from '../shared/clock.ts';
import { fakeFollowers, HOUR, SECOND, settle, startGatedTimers, T0 } from './gated-timers.fixture.ts';
import { invoiceTimerHandlers } from './invoice-timers.ts';
import { NOT_YET_RETRY_MS } from './timer-runner.ts';

type SessionStatus = 'open' | 'incomplete' | 'expired' | 'complete';

/**
 * A read store with the invoices `put` adds: each with a reminder due at T0 and the checkout
 * sessions given (opened on its pay page: status and deposit networks). Sending a reminder is
 * recorded in `sent` and removes its timer, as the invoice's events would.
 */
function remindedInvoices(now: () => number) {
  const store = createEmbeddedReadStore({});
  const timers = store.collection<TimerDoc>(COLLECTIONS.timers);
  const sessions = store.collection<{
    _id: string;
    organizationId: string;
    environment: string;
    invoiceId: string;
    status: SessionStatus;
    expiresAt: string;
    addresses: { network: string }[];
  }>(COLLECTIONS.checkoutSessions);
  const timerId = (invoiceId: string) => `${REMINDER_TIMER}:${invoiceId}:before_due:1`;
  const put = async (invoiceId: string, opened: { status: SessionStatus; networks: string[] }[]) => {
    for (const [index, session] of opened.entries()) {
      await sessions.put({
        _id: `cs_${invoiceId}_${index}`,
        organizationId: 'org',
        environment: 'test',
        invoiceId,
        status: session.status,
        expiresAt: new Date(T0 + HOUR).toISOString(),
        addresses: session.networks.map((network) => ({ network })),
      });
    }
    await timers.put({
      _id: timerId(invoiceId),
      kind: REMINDER_TIMER,
      recordId: invoiceId,
      organizationId: 'org',
      environment: 'test',
      fireAt: T0,
      args: { kind: 'before_due', days: 1, dueDate: '2026-06-02' },
    });
  };
  const sent: { invoiceId: string; at: number; command: unknown }[] = [];
  const commands: CommandHandler = {
    async handle(aggregate, id, command, _ctx) {
      sent.push({ invoiceId: id, at: now(), command });
      await timers.delete(timerId(id));
      return { state: aggregate.initialState(), events: [], position: 1n, existed: true };
    },
    load: () => Promise.reject(new Error('not used')),
  };
  return { store, timers, put, sent, commands };
}

test("a reminder waits for the followers of the networks its invoice's payable sessions are on to read through its time; other invoices are not held", async (t) => {
  const clock = createManualClock(T0);
  const { store, timers, put, sent, commands } = remindedInvoices(() => clock.now());
  await put('in_chain', [{ status: 'open', networks: ['test', 'sepolia'] }]);
  await put('in_partly_paid', [{ status: 'incomplete', networks: ['sepolia'] }]);
  await put('in_no_session', []);
  await put('in_test_rail', [{ status: 'open', networks: ['test'] }]);
  await put('in_session_over', [
    { status: 'expired', networks: ['sepolia'] },
    { status: 'complete', networks: ['sepolia'] },
  ]);
  // Only sepolia has a follower here; Weir just started, so it has read nothing yet.
  const followers = fakeFollowers(['sepolia']);
  const { runner, lines } = startGatedTimers(t, {
    clock,
    readStore: store,
    readThrough: followers.readThrough,
    handlers: (gate) => invoiceTimerHandlers(commands, { readStore: store, gate }),
  });
  await settle();
  t.deepEqual(sent.map((s) => s.invoiceId).sort(), ['in_no_session', 'in_session_over', 'in_test_rail']);
  t.deepEqual(sent[0]!.command, { type: 'SendInvoiceReminder', kind: 'before_due', days: 1, dueDate: '2026-06-02' });

  // The follower reads the blocks made while Weir was down, up to a head from before the reminder's time: not enough.
  followers.read('sepolia', T0 - SECOND, 100n);
  runner.retryWaiting();
  await settle();
  t.is(sent.length, 3);

  // It reads a head after the reminder's time: both reminders go out at once.
  followers.read('sepolia', T0 + SECOND, 101n);
  clock.advanceBy(2 * SECOND);
  runner.retryWaiting();
  await settle();
  t.deepEqual(
    sent
      .slice(3)
      .map((s) => s.invoiceId)
      .sort(),
    ['in_chain', 'in_partly_paid'],
  );
  t.true(sent.slice(3).every((s) => s.at === T0 + 2 * SECOND));
  t.deepEqual(await timers.find({}), []);
  t.deepEqual(lines, []);
});

test('while followers stay behind, reminders go out once the longest wait past their time is over, with one log line per network', async (t) => {
  const clock = createManualClock(T0);
  const { store, put, sent, commands } = remindedInvoices(() => clock.now());
  await put('in_a', [{ status: 'open', networks: ['sepolia', 'base'] }]);
  await put('in_b', [
    { status: 'open', networks: ['sepolia'] },
    { status: 'open', networks: ['base'] },
  ]);
  await put('in_c', [{ status: 'open', networks: ['base'] }]);
  const followers = fakeFollowers(['sepolia', 'base']);
  followers.read('sepolia', T0 - 60 * SECOND, 4242n);
  const { lines } = startGatedTimers(t, {
    clock,
    readStore: store,
    readThrough: followers.readThrough,
    maxWaitMs: 2 * HOUR,
    handlers: (gate) => invoiceTimerHandlers(commands, { readStore: store, gate }),
  });
  await settle();
  clock.advanceTo(T0 + 2 * HOUR);
  await settle();
  t.deepEqual(sent, []);

  clock.advanceBy(NOT_YET_RETRY_MS);
  await settle();
  t.deepEqual(sent.map((s) => s.invoiceId).sort(), ['in_a', 'in_b', 'in_c']);
  t.is(lines.length, 2, lines.join('\n'));
  t.deepEqual(lines.map((line) => /^\[timers\] (\w+):/.exec(line)?.[1]).sort(), ['base', 'sepolia']);
});
