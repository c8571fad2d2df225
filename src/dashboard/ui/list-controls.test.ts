import test from 'ava';
import { Pager } from './list-controls.tsx';

const pager = (page: number, count: number) =>
  Pager({ path: '/dashboard/invoices', params: { status: 'paid' }, page, pageSize: 20, count });

test('Pager: an empty first page draws nothing (the list says it is empty); a page past the end links back', async (t) => {
  t.is(await pager(1, 0), '');
  const past = await pager(3, 0);
  t.regex(past, /Nothing on this page/);
  t.regex(past, /rel="prev" href="\/dashboard\/invoices\?status=paid&page=2"/);
});

test('Pager: the range shown and the links before and after, filters kept', async (t) => {
  const middle = await pager(2, 45);
  t.regex(middle, /21–40 of 45/);
  t.regex(middle, /rel="prev"/);
  t.regex(middle, /rel="next" href="\/dashboard\/invoices\?status=paid&page=3"/);
  t.notRegex(await pager(3, 45), /rel="next"/);
});
