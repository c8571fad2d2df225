import test from 'ava';
import { IllegalEventError } from '../src/actors/aggregate.ts';
import { givenWhenThen } from '../src/actors/given-when-then.ts';
import { attemptDueAt } from '../src/webhooks/retry-schedule.ts';
import { webhookDeliveryAggregate, type WebhookDeliveryCommand } from './webhook-delivery.aggregate.ts';
import type { WebhookDeliveryEvent } from './webhook-delivery.machine.ts';

const given = givenWhenThen(webhookDeliveryAggregate);
const FIRST = Date.parse('2026-01-01T00:00:00.000Z');
const attempt = (
  n: number,
  statusCode: number | null,
): Extract<WebhookDeliveryCommand, { type: 'RecordDeliveryAttempt' }> => ({
  type: 'RecordDeliveryAttempt',
  attempt: n,
  firstDueAt: FIRST,
  statusCode,
  error: statusCode === null ? 'timeout' : null,
  durationMs: 5,
});
const at = (n: number) => new Date(attemptDueAt(FIRST, n)).toISOString();

/** Fold n failed attempts, each recorded at its due time. */
function failures(n: number): WebhookDeliveryEvent[] {
  const events: WebhookDeliveryEvent[] = [];
  for (let i = 1; i <= n; i++) events.push(...given(events).when(attempt(i, 500), at(i)));
  return events;
}

test('the retry schedule is 0, 30 s, 1m30, ... and the tenth attempt is 4 h 15 m 30 s after the first', (t) => {
  const offsets = Array.from({ length: 10 }, (_, i) => (attemptDueAt(FIRST, i + 1) - FIRST) / 1000);
  t.deepEqual(offsets, [0, 30, 90, 210, 450, 930, 1890, 3810, 7650, 15330]);
  t.is(15330, 4 * 3600 + 15 * 60 + 30);
});

test('given a pending delivery, when the first attempt gets a 2xx, then succeeded', (t) => {
  const events = given([]).when(attempt(1, 204), at(1));
  t.deepEqual(events, [
    { type: 'WebhookDeliverySucceeded', data: { attempt: 1, at: at(1), statusCode: 204, error: null, durationMs: 5 } },
  ]);
  t.is(given(events).state().value, 'succeeded');
});

test('given a pending delivery, when an attempt fails, then the next is due 30 s later, doubling', (t) => {
  const first = given([]).when(attempt(1, 500), at(1));
  t.deepEqual(first, [
    {
      type: 'WebhookDeliveryAttemptFailed',
      data: { attempt: 1, at: at(1), statusCode: 500, error: null, durationMs: 5, nextAttemptAt: at(2) },
    },
  ]);
  const second = given(first).when(attempt(2, null), at(2));
  t.is((second[0]!.data as { nextAttemptAt: string }).nextAttemptAt, new Date(FIRST + 90_000).toISOString());
});

test('given nine failed attempts, when the tenth fails, then the delivery is failed', (t) => {
  const nine = failures(9);
  t.is(given(nine).state().value, 'pending');
  const tenth = given(nine).when(attempt(10, 503), at(10));
  t.deepEqual(
    tenth.map((e) => e.type),
    ['WebhookDeliveryAttemptFailed', 'WebhookDeliveryFailed'],
  );
  t.is((tenth[0]!.data as { nextAttemptAt: string | null }).nextAttemptAt, null);
  t.is(given([...nine, ...tenth]).state().value, 'failed');
});

test('given nine failed attempts, when the tenth succeeds, then succeeded', (t) => {
  const nine = failures(9);
  t.deepEqual(
    given(nine)
      .when(attempt(10, 200), at(10))
      .map((e) => e.type),
    ['WebhookDeliverySucceeded'],
  );
});

test('given a delivery, when an attempt is recorded twice or out of order, then nothing', (t) => {
  const one = failures(1);
  t.deepEqual(given(one).when(attempt(1, 500)), []);
  t.deepEqual(given(one).when(attempt(3, 500)), []);
});

test('given a finished delivery, when another attempt is recorded, then nothing', (t) => {
  const ok = given([]).when(attempt(1, 200));
  t.deepEqual(given(ok).when(attempt(2, 200)), []);
  const failed = failures(10);
  t.deepEqual(given(failed).when(attempt(11, 200)), []);
});

test('the machine refuses facts out of order', (t) => {
  const skip: WebhookDeliveryEvent = {
    type: 'WebhookDeliverySucceeded',
    data: { attempt: 2, at: at(2), statusCode: 200, error: null, durationMs: 1 },
  };
  t.throws(() => given([skip]).state(), { instanceOf: IllegalEventError });
  const early: WebhookDeliveryEvent = { type: 'WebhookDeliveryFailed', data: { attempts: 1, at: at(1) } };
  t.throws(() => given([...failures(1), early]).state(), { instanceOf: IllegalEventError });
});

test('given a pending delivery, when its endpoint is gone, then it is canceled with the reason and nothing more is sent', (t) => {
  const one = failures(1);
  const canceled = given(one).when({ type: 'CancelDelivery', reason: 'endpoint_deleted' }, at(2));
  t.deepEqual(canceled, [
    { type: 'WebhookDeliveryCanceled', data: { attempts: 1, at: at(2), reason: 'endpoint_deleted' } },
  ]);
  const state = given([...one, ...canceled]).state();
  t.is(state.value, 'canceled');
  t.is(state.context.nextAttemptAt, null);
  t.deepEqual(given([...one, ...canceled]).when(attempt(2, 200)), []);
  t.deepEqual(given([...one, ...canceled]).when({ type: 'CancelDelivery', reason: 'endpoint_disabled' }), []);
});

test('given a finished delivery, when its endpoint is gone, then nothing', (t) => {
  const ok = given([]).when(attempt(1, 200));
  t.deepEqual(given(ok).when({ type: 'CancelDelivery', reason: 'endpoint_deleted' }), []);
  t.deepEqual(given(failures(10)).when({ type: 'CancelDelivery', reason: 'endpoint_disabled' }), []);
});

const resend = (by = 'user:u-1'): WebhookDeliveryCommand => ({ type: 'ResendDelivery', by });
const LATER = '2026-01-02T09:00:00.000Z';

test('given a succeeded delivery, when it is resent, then it is pending with one more attempt due now', (t) => {
  const ok = given([]).when(attempt(1, 200), at(1));
  const resent = given(ok).when(resend(), LATER);
  t.deepEqual(resent, [{ type: 'WebhookDeliveryResent', data: { attempts: 1, at: LATER, by: 'user:u-1' } }]);
  const state = given([...ok, ...resent]).state();
  t.is(state.value, 'pending');
  t.is(state.context.nextAttemptAt, LATER);
  const second = given([...ok, ...resent]).when({ ...attempt(2, 200), response: 'thanks' }, LATER);
  t.deepEqual(second, [
    {
      type: 'WebhookDeliverySucceeded',
      data: { attempt: 2, at: LATER, statusCode: 200, error: null, durationMs: 5, response: 'thanks' },
    },
  ]);
  t.is(given([...ok, ...resent, ...second]).state().value, 'succeeded');
});

test('given a failed or canceled delivery, when a resend fails, then it ends failed at once: no retries', (t) => {
  for (const ended of [
    failures(10),
    [...failures(1), ...given(failures(1)).when({ type: 'CancelDelivery', reason: 'endpoint_disabled' }, at(2))],
  ]) {
    const resent = given(ended).when(resend('api_key:k-1'), LATER);
    const n = given(ended).state().context.attempts + 1;
    const outcome = given([...ended, ...resent]).when(attempt(n, 500), LATER);
    t.deepEqual(
      outcome.map((e) => e.type),
      ['WebhookDeliveryAttemptFailed', 'WebhookDeliveryFailed'],
    );
    t.is((outcome[0]!.data as { nextAttemptAt: string | null }).nextAttemptAt, null);
    const state = given([...ended, ...resent, ...outcome]).state();
    t.is(state.value, 'failed');
    t.false(state.context.resent);
  }
});

test('given a delivery waiting for its retry, when it is resent, then the retry is due now and the schedule goes on', (t) => {
  const two = failures(2);
  const resent = given(two).when(resend(), at(2));
  t.is(given([...two, ...resent]).state().context.nextAttemptAt, at(2));
  const third = given([...two, ...resent]).when(attempt(3, 500), at(2));
  t.is((third[0]!.data as { nextAttemptAt: string }).nextAttemptAt, at(4));
  t.is(given([...two, ...resent, ...third]).state().value, 'pending');
});

test('given a delivery never tried or already due, when it is resent, then nothing (its attempt is coming)', (t) => {
  t.deepEqual(given([]).when(resend()), []);
  const one = failures(1);
  t.deepEqual(given(one).when(resend(), at(2)), []);
});
