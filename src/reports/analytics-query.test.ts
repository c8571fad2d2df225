import test from 'ava';
import { inexactMessage, inexactNumberIn } from './analytics-query.ts';

test('an answer holding an integer past 2^53 - 1 is found where it is; exact numbers, strings and fractions pass', (t) => {
  t.is(inexactNumberIn([{ _id: 'usdc', total: Number.MAX_SAFE_INTEGER, avg: 1.5, big: '90071992547409930' }]), null);
  const found = inexactNumberIn([
    { _id: 'usdc', total: 1 },
    { _id: 'dai', sums: { total: 2 ** 53 + 2 } },
  ]);
  t.deepEqual(found, { path: 'data[1].sums.total', value: 2 ** 53 + 2 });
  t.regex(inexactMessage(found!), /data\[1\]\.sums\.total is 9007199254740994, past 2\^53 - 1/);
  t.deepEqual(inexactNumberIn([{ list: [1, -(2 ** 60)] }]), { path: 'data[0].list[1]', value: -(2 ** 60) });
});
