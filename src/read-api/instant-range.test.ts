import test from 'ava';
import { ValidationError } from '../shared/errors.ts';
import { boundsCondition, instantRange, parseIsoInstant, rangeCondition } from './instant-range.ts';

test('a date-only to takes in that whole day (up to the next midnight, not counted); a timestamp stays exact and counted', (t) => {
  t.deepEqual(rangeCondition(instantRange({ from: '2026-11-01', to: '2026-11-30' })), {
    $gte: '2026-11-01T00:00:00.000Z',
    $lt: '2026-12-01T00:00:00.000Z',
  });
  t.deepEqual(rangeCondition(instantRange({ to: '2026-11-30T12:00:00Z' })), { $lte: '2026-11-30T12:00:00.000Z' });
  t.deepEqual(rangeCondition(instantRange({ to: '2026-11-30T12:00:00+01:00' })), { $lte: '2026-11-30T11:00:00.000Z' });
  // The day after the last one is no 4-digit year: the last instant, counted.
  t.deepEqual(instantRange({ to: '9999-12-31' }), { to: '9999-12-31T23:59:59.999Z' });
  t.deepEqual(rangeCondition(instantRange({ from: '', to: '' })), {});
});

test('a range whose to is before its from is a 400 naming to; one day from and to alike is that day; a bad bound is named', (t) => {
  t.deepEqual(rangeCondition(instantRange({ from: '2026-11-30', to: '2026-11-30' })), {
    $gte: '2026-11-30T00:00:00.000Z',
    $lt: '2026-12-01T00:00:00.000Z',
  });
  t.deepEqual(instantRange({ from: '2026-11-30T23:00:00Z', to: '2026-11-30' }).before, '2026-12-01T00:00:00.000Z');
  t.is(
    t.throws(() => instantRange({ from: '2026-12-01', to: '2026-11-30' }), { instanceOf: ValidationError })?.message,
    'to: must not be before from',
  );
  t.is(
    t.throws(() => instantRange({ from: '2026-11-30T00:00:01Z', to: '2026-11-30T00:00:00Z' }), {
      instanceOf: ValidationError,
    })?.message,
    'to: must not be before from',
  );
  t.regex(t.throws(() => instantRange({ from: 'yesterday' }))?.message ?? '', /^from: must be an ISO 8601/);
  t.regex(t.throws(() => instantRange({ to: '2026-02-30' }))?.message ?? '', /^to: must be an ISO 8601/);
});

test('an ISO bound whose offset carries it past year 9999 (or before 0000) is refused, not turned into a +010000 string that sorts before every stored time', (t) => {
  t.true(Number.isNaN(parseIsoInstant('9999-12-31T23:30:00-01:00')));
  t.true(Number.isNaN(parseIsoInstant('0000-01-01T00:30:00+01:00')));
  t.is(new Date(parseIsoInstant('9999-12-31T23:59:59.999Z')).toISOString(), '9999-12-31T23:59:59.999Z');
  t.is(new Date(parseIsoInstant('0000-01-01')).toISOString(), '0000-01-01T00:00:00.000Z');
  t.is(new Date(parseIsoInstant('2026-03-02T00:00:00+13:00')).toISOString(), '2026-03-01T11:00:00.000Z');
});

test("a range a zone's whole days empty is refused in that zone's words, not UTC's", (t) => {
  // After all of 30 November in New York is from 05:00Z on 1 December: a timestamp at noon UTC that day is before it.
  const error = t.throws(
    () =>
      boundsCondition(
        [
          { op: 'gt', raw: '2026-11-30', name: 'createdAt[gt]' },
          { op: 'lte', raw: '2026-12-01T04:00:00Z', name: 'createdAt[lte]' },
        ],
        'America/New_York',
      ),
    { instanceOf: ValidationError },
  );
  t.regex(error?.message ?? '', /a date alone stands for its whole day in America\/New_York\)$/);
});

test('a date alone in years 0 to 99 is that year in a zone too, not 1900 to 1999; 0000-02-29 is a day (year 0 is a leap year)', (t) => {
  t.deepEqual(instantRange({ from: '0050-01-01', to: '0050-01-01' }, 'America/New_York'), {
    from: '0050-01-01T04:56:02.000Z',
    before: '0050-01-02T04:56:02.000Z',
  });
  // Read as 1999-12-31 and 0100-01-01, this range was refused as crossed.
  t.deepEqual(instantRange({ from: '0099-12-31', to: '0100-01-01' }, 'Europe/Paris'), {
    from: '0099-12-30T23:50:39.000Z',
    before: '0100-01-01T23:50:39.000Z',
  });
  t.is(new Date(parseIsoInstant('0000-02-29')).toISOString(), '0000-02-29T00:00:00.000Z');
});
