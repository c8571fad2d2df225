import test from 'ava';
import { createManualClock } from './clock.ts';
import { createTokenBuckets, formatTokenBucketLimit, parseTokenBucketLimit } from './token-buckets.ts';

test('a bucket gives its burst at once, then refuses with the whole seconds until the next token', (t) => {
  const clock = createManualClock();
  const buckets = createTokenBuckets({ clock, limit: { perSecond: 0.5, burst: 3 } });
  t.deepEqual([buckets.take('a'), buckets.take('a'), buckets.take('a')], [0, 0, 0]);
  t.is(buckets.take('a'), 2, 'one token every 2 s');
  t.is(buckets.wait('a'), 2);
  clock.advanceBy(1500);
  t.is(buckets.take('a'), 1, 'half a second to go is still a whole second');
  clock.advanceBy(500);
  t.is(buckets.take('a'), 0);
  t.is(buckets.take('a'), 2);
});

test('buckets refill on the clock up to the burst and no further, and keys do not share', (t) => {
  const clock = createManualClock();
  const buckets = createTokenBuckets({ clock, limit: { perSecond: 10, burst: 5 } });
  for (let i = 0; i < 5; i++) t.is(buckets.take('a'), 0);
  t.is(buckets.take('a'), 1);
  t.is(buckets.take('b'), 0, 'another key has its own bucket');
  clock.advanceBy(60_000);
  for (let i = 0; i < 5; i++) t.is(buckets.take('a'), 0, 'a minute later: the burst again');
  t.true(buckets.take('a') > 0, 'but not more than the burst');
});

test('a refused take spends nothing, and a clock set back refills nothing', (t) => {
  const clock = createManualClock();
  const buckets = createTokenBuckets({ clock, limit: { perSecond: 1, burst: 1 } });
  t.is(buckets.take('a'), 0);
  for (let i = 0; i < 10; i++) t.is(buckets.take('a'), 1);
  clock.advanceBy(1000);
  t.is(buckets.take('a'), 0, 'refused takes did not push the next token back');
  clock.set(clock.now() - 60_000);
  t.is(buckets.take('a'), 1);
});

test('a flood of distinct keys keeps the map bounded: refilled buckets go first, then the least recently used', (t) => {
  const clock = createManualClock();
  const buckets = createTokenBuckets({ clock, limit: { perSecond: 1, burst: 2 }, maxBuckets: 100 });
  for (let i = 0; i < 10_000; i++) {
    buckets.take(`flood-${i}`);
    t.true(buckets.size() <= 100);
  }
  // An idle client that spent its burst, then a flood: its bucket survives while refilled ones can go.
  const idle = createTokenBuckets({ clock, limit: { perSecond: 1, burst: 2 }, maxBuckets: 100 });
  idle.take('spender');
  idle.take('spender');
  for (let i = 0; i < 50; i++) idle.take(`old-${i}`);
  clock.advanceBy(10_000);
  idle.take('spender');
  idle.take('spender');
  t.is(idle.take('spender'), 1);
  for (let i = 0; i < 60; i++) idle.take(`new-${i}`);
  t.true(idle.size() <= 100);
  t.is(idle.take('spender'), 1, 'the refilled old keys were dropped, not the spent bucket');
});

test('limits are spelled RATE/UNIT:BURST or off', (t) => {
  t.deepEqual(parseTokenBucketLimit('100/s:2000'), { perSecond: 100, burst: 2000 });
  t.deepEqual(parseTokenBucketLimit('30/min:60'), { perSecond: 0.5, burst: 60 });
  t.deepEqual(parseTokenBucketLimit('3600/h:10'), { perSecond: 1, burst: 10 });
  t.deepEqual(parseTokenBucketLimit(' 2.5/s : 5 '), { perSecond: 2.5, burst: 5 });
  t.is(parseTokenBucketLimit('off'), null);
  t.is(parseTokenBucketLimit('OFF'), null);
  for (const bad of ['', '100', '100/s', '100/day:5', '0/s:5', '10/s:0', '10/s:1.5', '-1/s:5', 'x/s:5'])
    t.throws(() => parseTokenBucketLimit(bad), undefined, bad);
  t.is(formatTokenBucketLimit({ perSecond: 100, burst: 2000 }), '100/s:2000');
  t.is(formatTokenBucketLimit({ perSecond: 0.5, burst: 60 }), '30/min:60');
  t.is(formatTokenBucketLimit(null), 'off');
});
