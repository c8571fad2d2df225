import { randomBytes } from 'node:crypto';
import test from 'ava';
import { createCsrf } from './csrf.ts';

test('a CSRF token verifies for its own binding only, and only under its key', (t) => {
  const key = randomBytes(32);
  const csrf = createCsrf(key);
  const token = csrf.tokenFor('session:a');
  t.regex(token, /^[A-Za-z0-9_-]{43}$/);
  t.is(csrf.tokenFor('session:a'), token, 'stable: nothing is stored');
  t.true(csrf.verify('session:a', token));
  t.false(csrf.verify('session:b', token), 'another session');
  t.false(csrf.verify('session:a', undefined));
  t.false(csrf.verify('session:a', ''));
  t.false(csrf.verify('session:a', `${token}x`));
  t.false(createCsrf(randomBytes(32)).verify('session:a', token), 'another server key');
  t.throws(() => createCsrf(randomBytes(16)), { message: /at least 32 bytes/ });
});
