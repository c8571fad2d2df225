import test from 'ava';
import { createManualClock } from '../../src/shared/clock.ts';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';
import { assertError, createCustomer, type Page } from './helpers.ts';

/**
 * Either side of the two Paris midnights of 1 November 2026 (CET, UTC+1, since 25 October): 23:30
 * on 31 October, 00:30 and 23:30 on 1 November, 00:30 on 2 November, Paris time.
 */
const INSTANTS = ['2026-10-31T22:30:00Z', '2026-10-31T23:30:00Z', '2026-11-01T22:30:00Z', '2026-11-01T23:30:00Z'];
const LISTS = ['/api/v1/checkout/sessions', '/api/v1/invoices', '/api/v1/customers'] as const;

test('lists take the export’s timezone: createdAt[gte]=2026-11-01&timezone=Europe/Paris is from Paris midnight, on sessions, invoices and customers alike, and the export of the same query answers the same sessions; absent, UTC days as before; a bad zone is a 400 naming timezone', async (t) => {
  const clock = createManualClock(Date.parse(INSTANTS[0]!));
  const weir = await startTestWeir(t, {}, { clock });
  const { api, testSecretKey } = await createMerchant(weir.url, 'Paris shop');
  const made: Record<(typeof LISTS)[number], string[]> = {
    '/api/v1/checkout/sessions': [],
    '/api/v1/invoices': [],
    '/api/v1/customers': [],
  };
  for (const [i, at] of INSTANTS.entries()) {
    clock.set(Date.parse(at));
    const customerId = await createCustomer(api, `payer${i}@example.com`);
    made['/api/v1/customers'].push(customerId);
    const session = await api.post<{ id: string }>('/api/v1/checkout/sessions', sessionRequest());
    t.is(session.status, 200, JSON.stringify(session.body));
    made['/api/v1/checkout/sessions'].push(session.body.id);
    const invoice = await api.post<{ id: string }>('/api/v1/invoices', {
      customerId,
      lineItems: {
        data: [
          { priceData: { currency: 'usdc', unitAmount: '100000000', productData: { name: 'Hour' } }, quantity: 1 },
        ],
      },
    });
    t.is(invoice.status, 200, JSON.stringify(invoice.body));
    made['/api/v1/invoices'].push(invoice.body.id);
  }

  const listed = async (path: string, query: string) => {
    const answer = await api.get<Page<{ id: string }>>(`${path}?${query}`);
    t.is(answer.status, 200, `${path}?${query}: ${JSON.stringify(answer.body)}`);
    return answer.body.data.map((r) => r.id);
  };
  // Newest first, as the lists answer; `picked` are indexes into INSTANTS.
  const expected = (path: (typeof LISTS)[number], ...picked: number[]) => picked.map((i) => made[path][i]!).reverse();
  for (const path of LISTS) {
    t.deepEqual(await listed(path, 'createdAt[gte]=2026-11-01&timezone=Europe/Paris'), expected(path, 1, 2, 3), path);
    t.deepEqual(
      await listed(path, 'createdAt[gte]=2026-11-01&createdAt[lte]=2026-11-01&timezone=Europe/Paris'),
      expected(path, 1, 2),
      `${path}: the Paris day exactly`,
    );
    t.deepEqual(await listed(path, 'createdAt[lt]=2026-11-01&timezone=Europe/Paris'), expected(path, 0), path);
    t.deepEqual(await listed(path, 'createdAt[gt]=2026-11-01&timezone=Europe/Paris'), expected(path, 3), path);
    // A timestamp stays exact; absent or empty, a date alone is a UTC day, as it always was.
    t.deepEqual(
      await listed(path, 'createdAt[gte]=2026-11-01T23:00:00Z&timezone=Europe/Paris'),
      expected(path, 3),
      path,
    );
    t.deepEqual(await listed(path, 'createdAt[gte]=2026-11-01'), expected(path, 2, 3), `${path}: UTC`);
    t.deepEqual(await listed(path, 'createdAt[gte]=2026-11-01&timezone='), expected(path, 2, 3), `${path}: empty`);
    t.deepEqual(await listed(path, 'createdAt[gte]=2026-11-01&timezone=UTC'), expected(path, 2, 3), path);
    for (const zone of ['Mars/Olympus', '+01:00', 'CET!', 'Europe'])
      assertError(t, await api.get(`${path}?createdAt[gte]=2026-11-01&timezone=${encodeURIComponent(zone)}`), 400, {
        field: 'timezone',
        message: /^timezone: must be an IANA time zone/,
      });
    // Spelt as a list parameter, the schema does not see it: the list checks it itself.
    assertError(t, await api.get(`${path}?createdAt[gte]=2026-11-01&timezone[]=Mars%2FOlympus`), 400, {
      field: 'timezone',
    });
  }

  // The export of the same query: the same sessions, one conversion of a date alone for both.
  const exported = async (query: string) => {
    const r = await fetch(`${weir.url}/api/v1/checkout/sessions/export?${query}`, {
      headers: { authorization: `Bearer ${testSecretKey}` },
    });
    t.is(r.status, 200, query);
    return (await r.text())
      .trim()
      .split('\r\n')
      .slice(1)
      .map((row) => row.split(',')[0]);
  };
  for (const query of [
    'createdAt[gte]=2026-11-01&timezone=Europe/Paris',
    'createdAt[gte]=2026-11-01&createdAt[lte]=2026-11-01&timezone=Europe/Paris',
    'createdAt[gte]=2026-11-01',
  ])
    t.deepEqual(await exported(query), await listed('/api/v1/checkout/sessions', query), query);
  t.deepEqual(
    await exported('from=2026-11-01&to=2026-11-01&timezone=Europe/Paris'),
    expected('/api/v1/checkout/sessions', 1, 2),
  );
  assertError(t, await api.get('/api/v1/checkout/sessions/export?timezone[]=Mars%2FOlympus'), 400, {
    field: 'timezone',
  });
});

test('the document lists timezone on every route that takes a createdAt bound, in the export’s words, and says each bound is read in it', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  type Parameter = { name: string; in: string; description?: string; schema?: { deprecated?: boolean } };
  type Operation = { parameters?: Parameter[] };
  const document = (await api.get<{ paths: Record<string, Record<string, Operation>> }>('/api/v1/openapi.json')).body;
  const exportZone = document.paths['/api/v1/checkout/sessions/export']?.get?.parameters?.find(
    (p) => p.name === 'timezone',
  );
  // The sentence on the bounds every list shares with the export, after the export's own on `from` / `to`.
  const shared =
    /A date alone in a `createdAt\[\.\.\.\]` bound \(or another date bound\) is that whole day in the zone.*$/.exec(
      exportZone?.description ?? '',
    )?.[0];
  t.truthy(shared, exportZone?.description);
  const bounded = Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.entries(operations)
      // A refused bound (the networks have no createdAt) is documented as deprecated: no list filters by it.
      .filter(([, operation]) =>
        operation.parameters?.some((p) => p.name === 'createdAt[gte]' && !p.schema?.deprecated),
      )
      .map(([method, operation]) => ({ route: `${method.toUpperCase()} ${path}`, parameters: operation.parameters! })),
  );
  for (const list of ['/api/v1/checkout/sessions', '/api/v1/invoices', '/api/v1/customers', '/api/v1/transactions'])
    t.true(
      bounded.some((b) => b.route === `GET ${list}`),
      list,
    );
  t.true(bounded.length >= 15, bounded.map((b) => b.route).join(', '));
  for (const { route, parameters } of bounded) {
    const zone = parameters.find((p) => p.name === 'timezone');
    t.is(zone?.in, 'query', route);
    t.true(zone?.description?.startsWith('The IANA time zone (`UTC` unless given)'), route);
    t.true(zone?.description?.endsWith(shared!), route);
    for (const bound of parameters.filter((p) => /\[(gt|gte|lt|lte)\]$/.test(p.name)))
      t.regex(
        bound.description ?? '',
        /with `timezone`, a date alone is that day in the zone/,
        `${route} ${bound.name}`,
      );
  }
});
