import test from 'ava';
import { settleWithin } from './settle-within.ts';

test('a value, a rejection, or a promise still pending after the wait', async (t) => {
  t.deepEqual(await settleWithin(Promise.resolve(42), 1000), { value: 42 });
  const error = new Error('no');
  t.deepEqual(await settleWithin(Promise.reject(error), 1000), { rejected: error });
  t.deepEqual(await settleWithin(new Promise(() => {}), 5), { timedOut: true });
});
