import test from 'ava';
import { appliedQuery, parseSessionsQuery, sessionsFilter } from './list-query.ts';

const TENANT = { organizationId: 'org-1', environment: 'test' as const };

test('the filters as typed: status, payment status, a creation range in whole UTC days, a search over id, client reference and email', (t) => {
  const { query, errors } = parseSessionsQuery({
    status: 'open',
    paymentStatus: 'unpaid',
    from: '2026-05-01',
    to: '2026-05-31',
    q: ' Pat+1@Example.com ',
    page: '3',
  });
  t.deepEqual(errors, {});
  t.is(query.page, 3);
  t.deepEqual(sessionsFilter(TENANT, query), {
    ...TENANT,
    status: 'open',
    paymentStatus: 'unpaid',
    createdAt: { $gte: '2026-05-01T00:00:00.000Z', $lt: '2026-06-01T00:00:00.000Z' },
    $or: [
      { _id: 'Pat+1@Example.com' },
      { clientReferenceId: 'Pat+1@Example.com' },
      { 'customerDetails.email': { $regex: '^Pat\\+1@Example\\.com$', $options: 'i' } },
    ],
  });
});

test('filters that cannot be used are named and left out; a bad page is the first', (t) => {
  const { query, errors } = parseSessionsQuery({
    status: 'paid',
    paymentStatus: 'maybe',
    from: '2026-02-31',
    page: '-1',
  });
  t.deepEqual(errors, {
    status: 'Pick a status: open, complete, incomplete, expired, canceled.',
    paymentStatus: 'Pick paid or unpaid.',
    from: '2026-02-31 does not exist: February 2026 has 28 days.',
  });
  t.is(query.page, 1);
  t.deepEqual(sessionsFilter(TENANT, query, errors), TENANT);
  // In the form asked but no day: said so, not asked for the form it has.
  t.deepEqual(parseSessionsQuery({ from: '2026-11-31', to: '2026-13-01' }).errors, {
    from: '2026-11-31 does not exist: November 2026 has 30 days.',
    to: '2026-13-01 does not exist: months are 01 to 12.',
  });
  t.deepEqual(parseSessionsQuery({ from: '31-11-2026' }).errors, { from: 'Enter a date as YYYY-MM-DD.' });
  t.deepEqual(parseSessionsQuery({ from: '2026-05-02', to: '2026-05-01' }).errors, {
    to: 'The end date is before the start date.',
  });
});

test("the filters applied, for the list's refresh, pages and download: those refused cleared, the rest kept", (t) => {
  const { query, errors } = parseSessionsQuery({ status: 'lost', paymentStatus: 'paid', from: '2026-02-31', q: 'pat' });
  t.deepEqual(appliedQuery(query, errors), { ...query, status: '', from: '' });
  const fine = parseSessionsQuery({ status: 'open', from: '2026-02-01' });
  t.deepEqual(appliedQuery(fine.query, fine.errors), fine.query);
});

test('a time zone makes the creation range whole days there (the CSV download reads the same filter); an unknown one is named at its field and the range read in UTC', (t) => {
  const { query, errors } = parseSessionsQuery({ from: '2026-11-30', to: '2026-11-30', timezone: 'America/New_York' });
  t.deepEqual(errors, {});
  t.is(query.timezone, 'America/New_York');
  t.deepEqual(sessionsFilter(TENANT, query).createdAt, {
    $gte: '2026-11-30T05:00:00.000Z',
    $lt: '2026-12-01T05:00:00.000Z',
  });
  // Absent or empty: UTC, as before.
  t.is(parseSessionsQuery({}).query.timezone, 'UTC');
  t.is(parseSessionsQuery({ timezone: '' }).query.timezone, 'UTC');
  const unknown = parseSessionsQuery({ from: '2026-11-30', timezone: 'Mars/Olympus' });
  t.regex(unknown.errors.timezone ?? '', /^Mars\/Olympus is not a time zone: pick one from the list/);
  t.is(unknown.query.timezone, 'UTC');
  t.deepEqual(sessionsFilter(TENANT, unknown.query, unknown.errors).createdAt, { $gte: '2026-11-30T00:00:00.000Z' });
});
