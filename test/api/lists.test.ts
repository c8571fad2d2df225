import test, { type ExecutionContext } from 'ava';
import { createManualClock } from '../../src/shared/clock.ts';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';
import { type Api, assertError, type Page, type Session } from './helpers.ts';

const SESSIONS = '/api/v1/checkout/sessions';
const START = Date.parse('2026-03-01T12:00:00Z');
const MINUTE = 60_000;

/** Five sessions created one minute apart (12:00 … 12:04), oldest first; amounts 1 … 5 USDC tell them apart. */
async function fiveSessions(t: ExecutionContext) {
  const clock = createManualClock(START);
  const weir = await startTestWeir(t, {}, { clock });
  const merchant = await createMerchant(weir.url);
  const sessions: Session[] = [];
  for (let i = 0; i < 5; i++) {
    if (i > 0) clock.advanceBy(MINUTE);
    const r = await merchant.api.post<Session>(SESSIONS, sessionRequest(`${i + 1}00000000`, 1));
    if (r.status !== 200) throw new Error(JSON.stringify(r.body));
    sessions.push(r.body);
  }
  return { weir, clock, ...merchant, sessions };
}

const ids = (page: Page<Session>) => page.data.map((s) => s.id);
const list = async (api: Api, query: string) => {
  const r = await api.get<Page<Session>>(`${SESSIONS}?${query}`);
  if (r.status !== 200) throw new Error(`${query}: ${JSON.stringify(r.body)}`);
  return r.body;
};

test('pages: limit and page, newest first, with count and hasMore', async (t) => {
  const { api, sessions } = await fiveSessions(t);
  t.deepEqual(
    sessions.map((s) => s.createdAt),
    ['12:00', '12:01', '12:02', '12:03', '12:04'].map((hm) => `2026-03-01T${hm}:00.000Z`),
  );
  const newestFirst = [...sessions].reverse().map((s) => s.id);

  const all = await list(api, '');
  t.like(all, { page: 1, limit: 200, count: 5, hasMore: false });
  t.deepEqual(ids(all), newestFirst);

  const first = await list(api, 'limit=2');
  t.like(first, { page: 1, limit: 2, count: 5, hasMore: true });
  t.deepEqual(ids(first), newestFirst.slice(0, 2));

  const second = await list(api, 'limit=2&page=2');
  t.deepEqual(Object.keys(second).sort(), ['count', 'data', 'hasMore', 'limit', 'page']);
  t.like(second, { page: 2, limit: 2, count: 5, hasMore: true });
  t.is(second.data.length, 2);
  t.deepEqual(ids(second), newestFirst.slice(2, 4));
  t.deepEqual(
    second.data.map((s) => s.amountTotal),
    ['300000000', '200000000'],
  );

  const third = await list(api, 'limit=2&page=3');
  t.like(third, { page: 3, limit: 2, count: 5, hasMore: false });
  t.deepEqual(ids(third), newestFirst.slice(4));

  const beyond = await list(api, 'limit=2&page=4');
  t.like(beyond, { page: 4, count: 5, hasMore: false });
  t.deepEqual(beyond.data, []);

  // Every session appears exactly once across the pages.
  t.deepEqual([...ids(first), ...ids(second), ...ids(third)], newestFirst);
  // The list items are the same documents as the single GETs.
  t.deepEqual(second.data[0], (await api.get<Session>(`${SESSIONS}/${second.data[0]!.id}`)).body);
});

test('filters: status and ids', async (t) => {
  const { weir, api, sessions } = await fiveSessions(t);
  const [a, b, c, d] = sessions as [Session, Session, Session, Session, Session];
  t.is((await api.post(`${SESSIONS}/${b.id}/cancel`)).status, 200);

  const open = await list(api, 'status=open');
  t.is(open.count, 4);
  t.false(ids(open).includes(b.id));
  t.true(open.data.every((s) => s.status === 'open'));
  const canceled = await list(api, 'status=canceled');
  t.is(canceled.count, 1);
  t.deepEqual(ids(canceled), [b.id]);
  t.is((await list(api, 'status=complete')).count, 0);

  const picked = await list(api, `ids=${a.id},${c.id}`);
  t.is(picked.count, 2);
  t.deepEqual(ids(picked), [c.id, a.id], 'still newest first');
  t.deepEqual(ids(await list(api, `ids=${d.id}`)), [d.id]);
  t.is((await list(api, 'ids=00000000-0000-4000-8000-000000000000')).count, 0);
  // Filters combine.
  t.deepEqual(ids(await list(api, `ids=${a.id},${b.id}&status=open`)), [a.id]);
  t.deepEqual(ids(await list(api, `ids=${a.id},${b.id},${c.id}&limit=1&page=2`)), [b.id]);

  // Another organization's ids are not found through the filter.
  const other = await createMerchant(weir.url, 'Other');
  t.is((await list(other.api, `ids=${a.id},${b.id}`)).count, 0);
});

test('createdAt bounds: gte, gt, lt, lte, combined', async (t) => {
  const { api, sessions } = await fiveSessions(t);
  const newestFirst = [...sessions].reverse().map((s) => s.id);
  const at = (hm: string) => encodeURIComponent(`2026-03-01T${hm}:00Z`);

  t.deepEqual(ids(await list(api, `createdAt[gte]=${at('12:02')}`)), newestFirst.slice(0, 3));
  t.deepEqual(ids(await list(api, `createdAt[gt]=${at('12:02')}`)), newestFirst.slice(0, 2));
  t.deepEqual(ids(await list(api, `createdAt[lt]=${at('12:02')}`)), newestFirst.slice(3));
  t.deepEqual(ids(await list(api, `createdAt[lte]=${at('12:02')}`)), newestFirst.slice(2));
  const window = await list(api, `createdAt[gte]=${at('12:01')}&createdAt[lt]=${at('12:03')}`);
  t.is(window.count, 2);
  t.deepEqual(ids(window), [sessions[2]!.id, sessions[1]!.id]);
  // Bounds with an offset, and without one (read as UTC), name the same instant.
  t.deepEqual(
    ids(await list(api, `createdAt[gte]=${encodeURIComponent('2026-03-01T13:03:00+01:00')}`)),
    newestFirst.slice(0, 2),
  );
  t.deepEqual(ids(await list(api, 'createdAt[gte]=2026-03-01T12:03:00')), newestFirst.slice(0, 2));
  // A bare date is midnight UTC.
  t.is((await list(api, 'createdAt[gte]=2026-03-01')).count, 5);
  t.is((await list(api, 'createdAt[gte]=2026-03-02')).count, 0);
  t.is((await list(api, 'createdAt[lt]=2026-03-01')).count, 0);
  // Bounds combine with paging.
  t.like(await list(api, `createdAt[gte]=${at('12:01')}&limit=3`), { count: 4, hasMore: true });
});

test("a date alone in a createdAt bound is that whole day UTC: createdAt[lte]=<today's date> takes in a session made today", async (t) => {
  const { api, sessions } = await fiveSessions(t);
  const all = sessions.map((s) => s.id).reverse();
  t.deepEqual(ids(await list(api, 'createdAt[lte]=2026-03-01')), all);
  t.is((await list(api, 'createdAt[gt]=2026-03-01')).count, 0);
  t.deepEqual(ids(await list(api, 'createdAt[gt]=2026-02-28&createdAt[lt]=2026-03-02')), all);
  t.is((await list(api, 'createdAt[lte]=2026-02-28')).count, 0);
});

test('a list asked for a range whose lower bound is past its upper one is a 400 naming both bounds, as a report refuses it, where it answered an empty page', async (t) => {
  const { api, sessions } = await fiveSessions(t);
  const at = (hm: string) => encodeURIComponent(`2026-03-01T${hm}:00Z`);
  const refused = async (query: string, message: string, path = SESSIONS) => {
    const body = assertError(t, await api.get(`${path}?${query}`), 400, { code: 'parameter_invalid' });
    t.is(body.message, message, query);
  };
  // Timestamps: a strict bound at the other's instant empties the range too.
  await refused(
    `createdAt[gte]=${at('12:03')}&createdAt[lt]=${at('12:01')}`,
    'createdAt[lt]: must be after createdAt[gte]',
  );
  await refused(
    `createdAt[gt]=${at('12:02')}&createdAt[lte]=${at('12:02')}`,
    'createdAt[lte]: must be after createdAt[gt]',
  );
  await refused(
    `createdAt[gte]=${at('12:03')}&createdAt[lte]=${at('12:02')}`,
    'createdAt[lte]: must not be before createdAt[gte]',
  );
  // Dates alone, each its whole day UTC: after the whole of the 1st and before the 2nd is nothing.
  await refused(
    'createdAt[gte]=2026-03-02&createdAt[lte]=2026-03-01',
    'createdAt[lte]: must not be before createdAt[gte]',
  );
  await refused(
    'createdAt[gt]=2026-03-01&createdAt[lt]=2026-03-02',
    'createdAt[lt]: must be after createdAt[gt] (a date alone stands for its whole day UTC)',
  );
  // Other date fields, and the `field.op` spelling, alike.
  await refused(
    'dueDate[gte]=2026-04-02&dueDate.lt=2026-04-01',
    'dueDate[lt]: must be after dueDate[gte]',
    '/api/v1/invoices',
  );

  // Equal inclusive bounds are one instant (or one day), not a contradiction.
  t.deepEqual(ids(await list(api, `createdAt[gte]=${at('12:02')}&createdAt[lte]=${at('12:02')}`)), [sessions[2]!.id]);
  t.is((await list(api, 'createdAt[gte]=2026-03-01&createdAt[lte]=2026-03-01')).count, 5);
  t.is((await list(api, `createdAt[gte]=${at('12:02')}&createdAt[lt]=${at('12:03')}`)).count, 1);
});

test('other lists page the same way: webhook endpoints and API keys', async (t) => {
  const clock = createManualClock(START);
  const weir = await startTestWeir(t, {}, { clock });
  const { api } = await createMerchant(weir.url);
  const created: string[] = [];
  for (let i = 0; i < 3; i++) {
    clock.advanceBy(MINUTE);
    const r = await api.post<{ id: string }>('/api/v1/webhook-endpoints', {
      description: `e${i}`,
      url: `https://shop.example/hooks/${i}`,
      enabledEvents: { events: ['*'] },
    });
    created.push(r.body.id);
  }
  const page = (await api.get<Page<{ id: string }>>('/api/v1/webhook-endpoints?limit=2&page=1')).body;
  t.like(page, { page: 1, limit: 2, count: 3, hasMore: true });
  t.deepEqual(
    page.data.map((e) => e.id),
    [created[2], created[1]],
  );
  const keys = (await api.get<Page<{ id: string }>>('/api/v1/api-keys?limit=1')).body;
  t.like(keys, { page: 1, limit: 1, count: 1, hasMore: false });
});

test('a network filter names a network Weir offers: an unknown one is a 400 naming network and listing the offered ones, as status and chainId are refused, where it answered an empty page', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const chains = await api.get<Page<{ network: string }>>('/api/v1/chains');
  const offered = chains.body.data.map((c) => c.network);
  t.true(offered.length > 0, JSON.stringify(chains.body));
  const refused = assertError(t, await api.get('/api/v1/transactions?network=nope'), 400, {
    field: 'network',
    code: 'parameter_invalid',
  });
  t.is(refused.message, `network: must be one of ${[...new Set(offered)].join(', ')}`);
  for (const network of offered) {
    const answer = await api.get<Page<unknown>>(`/api/v1/transactions?network=${encodeURIComponent(network)}`);
    t.is(answer.status, 200, `${network}: ${JSON.stringify(answer.body)}`);
  }
  t.is((await api.get('/api/v1/transactions?network=')).status, 200, 'empty is no filter');
});
