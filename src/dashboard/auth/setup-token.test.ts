import test from 'ava';
import { createSetupToken } from './setup-token.ts';

test('the setup token matches only itself, only until spent; a new one replaces the old', (t) => {
  const setup = createSetupToken();
  t.false(setup.active());
  t.false(setup.matches('anything'));
  const first = setup.issue();
  t.regex(first, /^[A-Za-z0-9_-]{32}$/);
  t.true(setup.matches(first));
  t.false(setup.matches(`${first}x`));
  t.false(setup.matches(undefined));
  const second = setup.issue();
  t.false(setup.matches(first));
  t.true(setup.matches(second));
  setup.spend();
  t.false(setup.active());
  t.false(setup.matches(second));
});
