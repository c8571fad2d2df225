import test from 'ava';
import { ValidationError } from '../shared/errors.ts';
import type { ApiContext } from './api-context.ts';
import { listFilter } from './pagination.ts';

const ctx = (query: Record<string, string>) =>
  ({ query, state: { tenant: { organizationId: 'o1', environment: 'test' } } }) as unknown as ApiContext;
const createdAt = (query: Record<string, string>) => listFilter(ctx(query), {}).createdAt;

test('a list date bound given as a date alone stands for its whole day UTC, as the reports read to: lte takes in all of it, gt starts after it', (t) => {
  t.deepEqual(createdAt({ 'createdAt[lte]': '2026-11-30' }), { $lt: '2026-12-01T00:00:00.000Z' });
  t.deepEqual(createdAt({ 'createdAt[gt]': '2026-11-30' }), { $gte: '2026-12-01T00:00:00.000Z' });
  t.deepEqual(createdAt({ 'createdAt[gte]': '2026-11-30' }), { $gte: '2026-11-30T00:00:00.000Z' });
  t.deepEqual(createdAt({ 'createdAt[lt]': '2026-11-30' }), { $lt: '2026-11-30T00:00:00.000Z' });
  // `field.op` is read as `field[op]`, and other date fields alike.
  t.deepEqual(listFilter(ctx({ 'expiresAt.lte': '2026-02-28' }), { dateFields: ['expiresAt'] }).expiresAt, {
    $lt: '2026-03-01T00:00:00.000Z',
  });
});

test('a list reads a date alone in its bounds as the day in `timezone`, every date field alike; empty is UTC; a name that is no zone is a 400 naming timezone, in either spelling', (t) => {
  const paris = { timezone: 'Europe/Paris' };
  t.deepEqual(createdAt({ ...paris, 'createdAt[gte]': '2026-11-01', 'createdAt[lte]': '2026-11-01' }), {
    $gte: '2026-10-31T23:00:00.000Z',
    $lt: '2026-11-01T23:00:00.000Z',
  });
  t.deepEqual(listFilter(ctx({ ...paris, 'dueDate.gt': '2026-11-01' }), { dateFields: ['dueDate'] }).dueDate, {
    $gte: '2026-11-01T23:00:00.000Z',
  });
  t.deepEqual(createdAt({ timezone: '', 'createdAt[gte]': '2026-11-01' }), { $gte: '2026-11-01T00:00:00.000Z' });
  for (const query of [{ timezone: 'Mars/Olympus' }, { 'timezone[]': 'Mars/Olympus' }] as Record<string, string>[]) {
    const error = t.throws(() => listFilter(ctx(query), {}), { instanceOf: ValidationError });
    t.is(error?.field, 'timezone');
  }
});

test('a list date bound given as a timestamp stays exact; two bounds on one operator keep the tighter; the last day has no next midnight', (t) => {
  t.deepEqual(createdAt({ 'createdAt[lte]': '2026-11-30T12:00:00+01:00', 'createdAt[gt]': '2026-11-01T00:00:00Z' }), {
    $gt: '2026-11-01T00:00:00.000Z',
    $lte: '2026-11-30T11:00:00.000Z',
  });
  t.deepEqual(createdAt({ 'createdAt[lt]': '2026-11-30T06:00:00Z', 'createdAt[lte]': '2026-11-30' }), {
    $lt: '2026-11-30T06:00:00.000Z',
  });
  t.deepEqual(createdAt({ 'createdAt[gte]': '2026-12-05', 'createdAt[gt]': '2026-11-30' }), {
    $gte: '2026-12-05T00:00:00.000Z',
  });
  t.deepEqual(createdAt({ 'createdAt[lte]': '9999-12-31' }), { $lte: '9999-12-31T23:59:59.999Z' });
  t.deepEqual(createdAt({ 'createdAt[gt]': '9999-12-31' }), { $gt: '9999-12-31T23:59:59.999Z' });
  t.is(createdAt({}), undefined);
  t.is(
    t.throws(() => createdAt({ 'createdAt[lte]': '2026-02-30' }), { instanceOf: ValidationError })?.message,
    'createdAt[lte]: must be an ISO 8601 date or timestamp, such as 2026-05-01 or 2026-05-01T08:00:00Z',
  );
});

test('a lower bound past the upper one is a 400 naming both (the tighter of two on one operator), where the list answered nothing; equal inclusive bounds are one instant', (t) => {
  const refused = (query: Record<string, string>) =>
    t.throws(() => createdAt(query), { instanceOf: ValidationError })?.message;
  t.is(
    refused({ 'createdAt[gte]': '2026-11-30T12:00:00Z', 'createdAt[lt]': '2026-11-30T12:00:00Z' }),
    'createdAt[lt]: must be after createdAt[gte]',
  );
  t.is(
    refused({ 'createdAt[gt]': '2026-11-01', 'createdAt[gte]': '2026-12-05', 'createdAt[lte]': '2026-12-01' }),
    'createdAt[lte]: must not be before createdAt[gte]',
  );
  t.is(
    refused({ 'createdAt[gt]': '2026-11-30', 'createdAt[lte]': '2026-11-30T12:00:00Z' }),
    'createdAt[lte]: must be after createdAt[gt] (a date alone stands for its whole day UTC)',
  );
  t.is(
    refused({ 'createdAt[gt]': '9999-12-31', 'createdAt[lte]': '9999-12-31' }),
    'createdAt[lte]: must be after createdAt[gt]',
  );
  t.deepEqual(createdAt({ 'createdAt[gte]': '2026-11-30T12:00:00Z', 'createdAt[lte]': '2026-11-30T12:00:00Z' }), {
    $gte: '2026-11-30T12:00:00.000Z',
    $lte: '2026-11-30T12:00:00.000Z',
  });
});

test('a filter whose values are offered per environment says so when none is offered, where it listed nothing after "must be one of"', (t) => {
  const filter = (values: string[]) => listFilter(ctx({ network: 'ethereum' }), { filters: { network: { values } } });
  t.is(
    t.throws(() => filter([]), { instanceOf: ValidationError })?.message,
    'network: takes no value here: none is offered',
  );
  t.is(t.throws(() => filter(['devnet']), { instanceOf: ValidationError })?.message, 'network: must be one of devnet');
});
