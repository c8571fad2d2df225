import test from 'ava';
import { tryAgainIn } from './page-notices.ts';

test("when to try again follows Retry-After in a person's words, rounded up, singular and plural right", (t) => {
  t.is(tryAgainIn(1), 'Try again in 1 second.');
  t.is(tryAgainIn(5), 'Try again in 5 seconds.');
  t.is(tryAgainIn(59), 'Try again in 59 seconds.');
  t.is(tryAgainIn(60), 'Try again in about a minute.');
  t.is(tryAgainIn(61), 'Try again in 2 minutes.');
  t.is(tryAgainIn(180), 'Try again in 3 minutes.');
  t.is(tryAgainIn(181), 'Try again in 4 minutes.');
  t.is(tryAgainIn(7200), 'Try again in 2 hours.');
  t.is(tryAgainIn(7201), 'Try again in 3 hours.');
  // A fraction or nothing left still asks for a moment's wait, never "0 seconds".
  t.is(tryAgainIn(0), 'Try again in 1 second.');
  t.is(tryAgainIn(2.2), 'Try again in 3 seconds.');
});
