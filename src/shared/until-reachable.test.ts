import test from 'ava';
import { looksUnreachable, untilReachable } from './until-reachable.ts';

test('a service refusing twice is tried a third time, the waits doubling, each failure logged', async (t) => {
  const waits: number[] = [];
  const logged: number[] = [];
  let calls = 0;
  const value = await untilReachable(
    'NATS',
    async () => {
      calls += 1;
      if (calls < 3) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:4222'), { code: 'ECONNREFUSED' });
      return 'open';
    },
    {
      retryable: looksUnreachable,
      log: (_line, f) => logged.push(f.attempt),
      wait: async (ms) => void waits.push(ms),
      firstDelayMs: 100,
    },
  );
  t.is(value, 'open');
  t.deepEqual(waits, [100, 200]);
  t.deepEqual(logged, [1, 2]);
});

test('a failure that is no outage (a malformed URL) is thrown at once, untried again', async (t) => {
  let calls = 0;
  await t.throwsAsync(
    untilReachable(
      'MongoDB',
      async () => {
        calls += 1;
        throw new Error('Invalid scheme, expected connection string to start with "mongodb://"');
      },
      { retryable: looksUnreachable, log: () => t.fail('nothing to wait for'), wait: async () => {} },
    ),
    { message: /Invalid scheme/ },
  );
  t.is(calls, 1);
});
