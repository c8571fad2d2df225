import test from 'ava';
import { createManualClock } from '../../shared/clock.ts';
import { RateLimitedError } from '../../shared/errors.ts';
import { createSignInThrottle } from './throttle.ts';

const limits = { perAccount: { perSecond: 1 / 60, burst: 3 }, perAddress: { perSecond: 1 / 10, burst: 5 } };

test('an account with its failures spent is refused from every address until a try is back, a minute later', (t) => {
  const clock = createManualClock();
  const throttle = createSignInThrottle({ clock, limits });
  for (let i = 0; i < 3; i++) {
    t.notThrows(() => throttle.check('Pat@Example.com', '10.0.0.1'));
    throttle.failed('Pat@Example.com', '10.0.0.1');
  }
  const refused = t.throws(() => throttle.check('pat@example.com', '10.0.0.2'), { instanceOf: RateLimitedError });
  t.is(refused.message, 'too many failed sign-ins for this account; try again in 60 s');
  t.is(refused.headers['Retry-After'], '60');
  t.notThrows(() => throttle.check('someone@example.com', '10.0.0.2'), 'another account goes on');
  clock.advanceBy(59_000);
  t.throws(() => throttle.check('pat@example.com', '10.0.0.2'), { message: /try again in 1 s/ });
  clock.advanceBy(1_000);
  t.notThrows(() => throttle.check('pat@example.com', '10.0.0.2'));
});

test('an address with its failures spent is refused for every account', (t) => {
  const clock = createManualClock();
  const throttle = createSignInThrottle({ clock, limits });
  for (let i = 0; i < 5; i++) throttle.failed(`user${i}@example.com`, '10.0.0.9');
  t.throws(() => throttle.check('new@example.com', '10.0.0.9'), {
    message: 'too many failed sign-ins from this address; try again in 10 s',
  });
  t.notThrows(() => throttle.check('new@example.com', '10.0.0.8'));
  clock.advanceBy(10_000);
  t.notThrows(() => throttle.check('new@example.com', '10.0.0.9'));
});
