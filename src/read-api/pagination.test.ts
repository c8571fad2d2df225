import test from 'ava';
import { parseIsoInstant } from './pagination.ts';

test('an ISO bound whose offset carries it past year 9999 (or before 0000) is refused, not turned into a +010000 string that sorts before every stored time', (t) => {
  t.true(Number.isNaN(parseIsoInstant('9999-12-31T23:30:00-01:00')));
  t.true(Number.isNaN(parseIsoInstant('0000-01-01T00:30:00+01:00')));
  t.is(new Date(parseIsoInstant('9999-12-31T23:59:59.999Z')).toISOString(), '9999-12-31T23:59:59.999Z');
  t.is(new Date(parseIsoInstant('0000-01-01')).toISOString(), '0000-01-01T00:00:00.000Z');
  t.is(new Date(parseIsoInstant('2026-03-02T00:00:00+13:00')).toISOString(), '2026-03-01T11:00:00.000Z');
});
