import test from 'ava';
import { ConfigError, readConfig } from './config.ts';

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
