import test from 'ava';
import { type RateLimitName, RateLimitedError } from '../shared/errors.ts';
import { clientAddressKey } from './rate-limits.ts';

test('a client address is counted as IPv4 as it is, IPv4-mapped IPv6 as IPv4, and IPv6 by its /64', (t) => {
  t.is(clientAddressKey('203.0.113.7'), '203.0.113.7');
  t.is(clientAddressKey('::ffff:203.0.113.7'), '203.0.113.7');
  t.is(clientAddressKey('::FFFF:127.0.0.1'), '127.0.0.1');
  t.is(clientAddressKey('2001:db8:1:2::1'), '2001:db8:1:2::/64');
  t.is(clientAddressKey('2001:0db8:0001:0002:ffff:0:0:9'), '2001:db8:1:2::/64');
  t.is(clientAddressKey('2001:db8::1'), '2001:db8:0:0::/64');
  t.is(clientAddressKey('::1'), '0:0:0:0::/64');
  t.is(clientAddressKey('fe80::1%eth0'), 'fe80:0:0:0::/64');
  t.is(clientAddressKey('64:ff9b:1:2:3:4:1.2.3.4'), '64:ff9b:1:2::/64');
  t.is(clientAddressKey(''), '', 'a socket already gone has no address');
  t.is(clientAddressKey('not an address'), 'not an address', 'whatever a proxy wrote is its own key');
});

test('a refusal names one of the limits: its limit is typed by their names (tsc refuses another)', (t) => {
  const refusal = new RateLimitedError('rate limit hosted_creates: spent', 3, 'hosted_creates');
  const limit: RateLimitName | null = refusal.limit;
  t.is(limit, 'hosted_creates');
  t.is(refusal.headers['Retry-After'], '3');
  // @ts-expect-error: not a limit the HTTP edge has
  t.is(new RateLimitedError('rate limit nonsense', 1, 'nonsense').limit, 'nonsense');
});
