import test from 'ava';
import { DEFAULT_RATE_LIMITS, RATE_LIMITS_OFF } from '../read-api/rate-limits.ts';
import { ConfigError, rateLimitsOf, readConfig } from './config.ts';

test('WEIR_CHAIN_WAIT_MAX: how long an expiry or reminder waits for a chain follower, in seconds; an hour unless set; the flag wins', (t) => {
  t.is(readConfig([], {}).chainWaitMaxSeconds, 3600);
  t.is(readConfig([], { WEIR_CHAIN_WAIT_MAX: '' }).chainWaitMaxSeconds, 3600, 'empty is unset');
  t.is(readConfig([], { WEIR_CHAIN_WAIT_MAX: '600' }).chainWaitMaxSeconds, 600);
  t.is(readConfig([], { WEIR_CHAIN_WAIT_MAX: '0' }).chainWaitMaxSeconds, 0, '0: no waiting past the time');
  t.is(readConfig(['--chain-wait-max', '900'], { WEIR_CHAIN_WAIT_MAX: '600' }).chainWaitMaxSeconds, 900);
  t.is(readConfig(['--chain-wait-max=120'], {}).chainWaitMaxSeconds, 120);
});

test('a bad WEIR_CHAIN_WAIT_MAX is refused with an error naming the setting', (t) => {
  for (const value of ['1h', '-5', '1.5', 'abc', '3600 ', '99999999999']) {
    const error = t.throws(() => readConfig([], { WEIR_CHAIN_WAIT_MAX: value }), { instanceOf: ConfigError }, value);
    t.regex(error.message, /^WEIR_CHAIN_WAIT_MAX \(--chain-wait-max\) must be a whole number of seconds, got /);
    t.true(error.message.endsWith(value), error.message);
  }
  t.throws(() => readConfig(['--chain-wait-max', 'soon'], {}), {
    instanceOf: ConfigError,
    message: /WEIR_CHAIN_WAIT_MAX.*got soon$/,
  });
  t.throws(() => readConfig(['--chain-wait-max'], {}), {
    instanceOf: ConfigError,
    message: '--chain-wait-max needs a value',
  });
});

test('rate limits: each has its default unless set, RATE/UNIT:BURST or off; WEIR_RATE_LIMITS=off turns them all off', (t) => {
  t.deepEqual(rateLimitsOf(readConfig([], {})), DEFAULT_RATE_LIMITS);
  t.deepEqual(DEFAULT_RATE_LIMITS, {
    apiKey: { perSecond: 100, burst: 2000 },
    hosted: { perSecond: 50, burst: 1000 },
    hostedCreates: { perSecond: 1, burst: 60 },
    authFailures: { perSecond: 1, burst: 100 },
  });
  const set = readConfig(['--rate-limit-hosted-creates', '30/min:10', '--rate-limit-auth-failures=off'], {
    WEIR_RATE_LIMIT_API_KEY: '10/s:50',
    WEIR_RATE_LIMIT_HOSTED_CREATES: '1/s:1',
  });
  t.deepEqual(rateLimitsOf(set), {
    apiKey: { perSecond: 10, burst: 50 },
    hosted: DEFAULT_RATE_LIMITS.hosted,
    hostedCreates: { perSecond: 0.5, burst: 10 },
    authFailures: null,
  });
  t.deepEqual(
    rateLimitsOf(readConfig([], { WEIR_RATE_LIMITS: 'off', WEIR_RATE_LIMIT_API_KEY: '10/s:50' })),
    RATE_LIMITS_OFF,
  );
  t.deepEqual(rateLimitsOf(readConfig(['--rate-limits', 'on'], { WEIR_RATE_LIMITS: 'off' })), DEFAULT_RATE_LIMITS);
  t.throws(() => readConfig([], { WEIR_RATE_LIMITS: 'maybe' }), {
    instanceOf: ConfigError,
    message: 'WEIR_RATE_LIMITS (--rate-limits) must be on or off, got maybe',
  });
  t.throws(() => readConfig([], { WEIR_RATE_LIMIT_HOSTED: '100' }), {
    instanceOf: ConfigError,
    message: /^WEIR_RATE_LIMIT_HOSTED \(--rate-limit-hosted\): expected RATE\/UNIT:BURST .*, got 100$/,
  });
  t.throws(() => readConfig(['--rate-limit-api-key', '10/s:0'], {}), {
    instanceOf: ConfigError,
    message: /^WEIR_RATE_LIMIT_API_KEY \(--rate-limit-api-key\): the burst must be/,
  });
});

test('WEIR_TRUST_PROXY: off unless 1 (or the bare flag); anything else is refused', (t) => {
  t.false(readConfig([], {}).trustProxy);
  t.true(readConfig([], { WEIR_TRUST_PROXY: '1' }).trustProxy);
  t.true(readConfig(['--trust-proxy'], {}).trustProxy);
  t.false(readConfig(['--trust-proxy=0'], { WEIR_TRUST_PROXY: '1' }).trustProxy);
  t.throws(() => readConfig([], { WEIR_TRUST_PROXY: 'yes' }), { instanceOf: ConfigError, message: /WEIR_TRUST_PROXY/ });
});
