import test from 'ava';
import { jsx } from '../jsx/jsx-runtime.ts';
import { liveRefresh } from './components.tsx';
import { Pager, StatusFilter } from './list-controls.tsx';

const pager = (page: number, count: number) =>
  Pager({ path: '/dashboard/invoices', params: { status: 'paid' }, page, pageSize: 20, count });

test('Pager: an empty first page draws nothing (the list says it is empty); a page past the end links back', async (t) => {
  t.is(await pager(1, 0), '');
  const past = await pager(3, 0);
  t.regex(past, /Nothing on this page/);
  t.regex(past, /rel="prev" href="\/dashboard\/invoices\?status=paid&amp;page=2"/);
});

test('Pager: the range shown and the links before and after, filters kept', async (t) => {
  const middle = await pager(2, 45);
  t.regex(middle, /21–40 of 45/);
  t.regex(middle, /rel="prev"/);
  t.regex(middle, /rel="next" href="\/dashboard\/invoices\?status=paid&amp;page=3"/);
  t.notRegex(await pager(3, 45), /rel="next"/);
});

/**
 * Every value of the attribute `name` in `html`, as a browser reads it: none may hold an `&` that is not
 * `&amp;` (nor kitajs's `&#34;`), which a parser would read as the start of some other character reference.
 */
function attributes(t: import('ava').ExecutionContext, html: string, name: string): string[] {
  const values = [...html.matchAll(new RegExp(` ${name}="([^"]*)"`, 'g'))].map((m) => m[1]!);
  t.true(values.length > 0, `${name} in ${html}`);
  for (const value of values) t.notRegex(value, /&(?!amp;|#34;)/, `a bare & in ${name}="${value}"`);
  return values.map((value) => value.replaceAll('&#34;', '"').replaceAll('&amp;', '&'));
}

const NASTY = 'a&b"c<d>&amp;e';

test('Pager: a filter holding &, ", < or an entity round-trips through its links, the attribute written &amp; between parameters (was a raw &)', async (t) => {
  const html = await Pager({
    path: '/dashboard/checkout-sessions',
    params: { q: NASTY, status: 'open' },
    page: 2,
    pageSize: 20,
    count: 45,
  });
  const hrefs = attributes(t, html, 'href');
  t.is(hrefs.length, 2, 'previous and next');
  for (const [href, page] of [
    [hrefs[0]!, null],
    [hrefs[1]!, '3'],
  ] as const) {
    const url = new URL(href, 'https://weir.example');
    t.is(url.pathname, '/dashboard/checkout-sessions');
    t.is(url.searchParams.get('q'), NASTY);
    t.is(url.searchParams.get('status'), 'open');
    t.is(url.searchParams.get('page'), page);
  }
});

test('the status filter’s links and a live region’s refresh URL are written escaped, and read back as built', async (t) => {
  const filter = await StatusFilter({
    path: '/dashboard/invoices',
    label: 'Status',
    current: 'paid',
    statuses: [{ value: 'a&b"<', label: 'Odd' }],
  });
  const hrefs = attributes(t, filter, 'href');
  t.deepEqual(
    hrefs.map((href) => new URL(href, 'https://weir.example').searchParams.get('status')),
    [null, 'a&b"<'],
  );
  const live = liveRefresh('/dashboard/checkout-sessions?q=a%26b&page=2', ['checkout-sessions']);
  const html = await jsx('div', live);
  t.deepEqual(attributes(t, html, 'hx-get'), ['/dashboard/checkout-sessions?q=a%26b&page=2']);
});
