import test from 'ava';
import { givenWhenThen } from './given-when-then.ts';
import { mailAggregate, mailRetryDelayMs, type MailEvent } from './mail.ts';

const given = givenWhenThen(mailAggregate);
const NOW = '2026-03-01T00:00:00.000Z';
const sent: MailEvent = { type: 'MailSent', data: { to: 'payer@example.com', messageId: 'm-1', at: NOW } };
const failed = (attempt: number, at = NOW): MailEvent => ({
  type: 'MailDeliveryFailed',
  data: {
    to: 'payer@example.com',
    attempt,
    error: 'connection refused',
    retryAt: new Date(Date.parse(at) + mailRetryDelayMs(attempt)).toISOString(),
    at,
  },
});

test('given nothing, when sent, then MailSent; a repeat records nothing', (t) => {
  t.deepEqual(given([]).when({ type: 'RecordMailSent', to: 'payer@example.com', messageId: 'm-1' }, NOW), [sent]);
  t.deepEqual(given([sent]).when({ type: 'RecordMailSent', to: 'payer@example.com', messageId: 'm-2' }, NOW), []);
  t.deepEqual(given([sent]).state().sent, { to: 'payer@example.com', messageId: 'm-1', at: NOW });
});

test('when an attempt fails, then MailDeliveryFailed counts it and says when to try again (1 min doubling, at most 1 h)', (t) => {
  t.deepEqual(
    given([]).when({ type: 'RecordMailDeliveryFailed', to: 'payer@example.com', error: 'connection refused' }, NOW),
    [
      {
        type: 'MailDeliveryFailed',
        data: {
          to: 'payer@example.com',
          attempt: 1,
          error: 'connection refused',
          retryAt: '2026-03-01T00:01:00.000Z',
          at: NOW,
        },
      },
    ],
  );
  const third = given([failed(1), failed(2)]).when(
    { type: 'RecordMailDeliveryFailed', to: 'payer@example.com', error: 'timeout' },
    NOW,
  );
  t.like(third[0]!.data, { attempt: 3, retryAt: '2026-03-01T00:04:00.000Z' });
  t.deepEqual(
    [1, 2, 3, 6, 7, 8, 50].map(mailRetryDelayMs),
    [60_000, 120_000, 240_000, 1_920_000, 3_600_000, 3_600_000, 3_600_000],
  );
  t.deepEqual(
    given([failed(1), sent]).when({ type: 'RecordMailDeliveryFailed', to: 'payer@example.com', error: 'late' }, NOW),
    [],
    'a sent mail does not fail afterwards',
  );
});
