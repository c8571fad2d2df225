import test from 'ava';
import { createManualClock } from '../../src/shared/clock.ts';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';
import { assertError, payInFull, type Session } from './helpers.ts';

/** A minimal RFC 4180 reader: records of cells, quotes undone. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (cell += '"'), i++;
      else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') row.push(cell), (cell = '');
    else if (c === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      (row = []), (cell = ''), i++;
    } else cell += c;
  }
  return rows;
}

test('GET /checkout/sessions/export answers the filtered sessions as CSV, quoted and guarded; tenancy; bad filters are 400s', async (t) => {
  const weir = await startTestWeir(t);
  const alice = await createMerchant(weir.url, 'Alice');
  const bob = await createMerchant(weir.url, 'Bob');
  const hostile = (
    await alice.api.post<Session>('/api/v1/checkout/sessions', {
      ...sessionRequest(),
      clientReferenceId: '=HYPERLINK("https://evil.example","click"),x',
      metadata: { note: 'line one\nline "two"' },
    })
  ).body;
  const paid = (await alice.api.post<Session>('/api/v1/checkout/sessions', sessionRequest('100000000', 1))).body;
  await payInFull(weir, alice.api, paid);
  await bob.api.post('/api/v1/checkout/sessions', sessionRequest());

  const response = await fetch(`${weir.url}/api/v1/checkout/sessions/export`, {
    headers: { authorization: `Bearer ${alice.testSecretKey}` },
  });
  t.is(response.status, 200);
  t.is(response.headers.get('content-type'), 'text/csv; charset=utf-8');
  t.regex(
    response.headers.get('content-disposition') ?? '',
    /^attachment; filename="checkout-sessions-\d{4}-\d{2}-\d{2}\.csv"$/,
  );
  const rows = parseCsv(await response.text());
  const [header, ...records] = rows;
  t.is(records.length, 2);
  const column = (name: string) => header!.indexOf(name);
  const byId = new Map(records.map((r) => [r[column('id')]!, r]));
  const h = byId.get(hostile.id)!;
  t.is(h[column('clientReferenceId')], `'=HYPERLINK("https://evil.example","click"),x`);
  t.is(h[column('metadata')], JSON.stringify({ note: 'line one\nline "two"' }));
  t.is(h[column('status')], 'open');
  t.is(h[column('amountTotal')], '300000000');
  const p = byId.get(paid.id)!;
  t.is(p[column('paymentStatus')], 'paid');
  t.is(p[column('amountReceived')], '100000000');
  t.is(p[column('amountReceivedAfterClose')], '0', 'none of it came after a close');
  t.is(p[column('receivedAfterClose')], 'false');
  t.regex(p[column('transactionHash')]!, /^0x[0-9a-f]{64}$/);
  // Newest first, as the list.
  t.deepEqual(
    records.map((r) => r[column('id')]),
    [paid.id, hostile.id],
  );

  // The list's filters.
  const exported = async (query: string, key = alice.testSecretKey) => {
    const r = await fetch(`${weir.url}/api/v1/checkout/sessions/export?${query}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    return { status: r.status, rows: parseCsv(await r.text()).slice(1) };
  };
  t.deepEqual(
    (await exported('paymentStatus=paid')).rows.map((r) => r[0]),
    [paid.id],
  );
  t.deepEqual(
    (await exported('status=open')).rows.map((r) => r[0]),
    [hostile.id],
  );
  t.is((await exported('createdAt[gt]=2100-01-01')).rows.length, 0);
  t.is((await exported('to=2000-01-01T00:00:00Z')).rows.length, 0);
  t.is((await exported(`ids=${hostile.id}`)).rows.length, 1);
  // Another tenant exports only its own.
  t.is((await exported('', bob.testSecretKey)).rows.length, 1);

  for (const [query, field] of [
    ['status=lost', 'status'],
    ['mode=rental', 'mode'],
    ['createdAt[gte]=soon', 'createdAt[gte]'],
    ['from=yesterday', 'from'],
  ] as const)
    assertError(t, await alice.api.get(`/api/v1/checkout/sessions/export?${query}`), 400, { field });
});

test('export: a date-only to takes in that whole day; dateField=completedAt selects by completion, as the volume report counts, and names the file for it', async (t) => {
  const clock = createManualClock(Date.parse('2026-11-30T10:00:00Z'));
  const weir = await startTestWeir(t, {}, { clock });
  const { api, testSecretKey } = await createMerchant(weir.url, 'Shop');
  const open = (await api.post<Session>('/api/v1/checkout/sessions', sessionRequest())).body;
  clock.set(Date.parse('2026-11-30T23:50:00Z'));
  const late = (await api.post<Session>('/api/v1/checkout/sessions', sessionRequest('100000000', 1))).body;
  // Created on the 30th, completed on the 1st.
  clock.set(Date.parse('2026-12-01T00:10:00Z'));
  await payInFull(weir, api, late);

  const exported = async (query: string) => {
    const r = await fetch(`${weir.url}/api/v1/checkout/sessions/export?${query}`, {
      headers: { authorization: `Bearer ${testSecretKey}` },
    });
    t.is(r.status, 200, query);
    const ids = parseCsv(await r.text())
      .slice(1)
      .map((row) => row[0]);
    return { ids, file: r.headers.get('content-disposition') };
  };
  t.deepEqual((await exported('to=2026-11-30')).ids, [late.id, open.id]);
  t.deepEqual((await exported('from=2026-11-30&to=2026-11-30')).ids, [late.id, open.id]);
  t.deepEqual((await exported('to=2026-11-30T10:00:00Z')).ids, [open.id]);
  t.deepEqual((await exported('from=2026-12-01')).ids, []);
  // By completion: December's, as the volume report counts it; the open one is in no completion range.
  const december = await exported('dateField=completedAt&from=2026-12-01&to=2026-12-01');
  t.deepEqual(december.ids, [late.id]);
  t.is(december.file, 'attachment; filename="checkout-sessions-by-completedAt-2026-12-01.csv"');
  t.deepEqual((await exported('dateField=completedAt&to=2026-11-30')).ids, []);
  t.deepEqual((await exported('dateField=createdAt&to=2026-11-30')).ids, [late.id, open.id]);
  t.is((await exported('')).file, 'attachment; filename="checkout-sessions-2026-12-01.csv"');
  const volume = await api.get<{ data: { period: string }[] }>('/api/v1/reports/volume');
  t.deepEqual(
    volume.body.data.map((r) => r.period),
    ['2026-12-01T00:00:00.000Z'],
  );
  assertError(t, await api.get('/api/v1/checkout/sessions/export?dateField=updatedAt'), 400, { field: 'dateField' });
});

test('export: page and limit are refused as unknown, naming what it takes, and left out of the document; an export is the whole filtered set, where they were listed and ignored', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  for (const query of ['page=2', 'limit=1', 'page=1&limit=200']) {
    const refused = assertError(t, await api.get(`/api/v1/checkout/sessions/export?${query}`), 400, {
      code: 'parameter_invalid',
    });
    t.regex(refused.message, /^(page|limit): is not a known parameter; use createdAt\[gt\], /, query);
    t.notRegex(refused.message, /use page|, page,|, limit,/, query);
  }
  type Operation = { parameters?: { name: string; in: string }[] };
  const document = (await api.get<{ paths: Record<string, Record<string, Operation>> }>('/api/v1/openapi.json')).body;
  const names = (document.paths['/api/v1/checkout/sessions/export']?.get?.parameters ?? []).map((p) => p.name);
  t.true(names.includes('paymentLinkId') && names.includes('from'), names.join(', '));
  t.false(names.includes('page') || names.includes('limit'), names.join(', '));
  const list = (document.paths['/api/v1/checkout/sessions']?.get?.parameters ?? []).map((p) => p.name);
  t.true(list.includes('page') && list.includes('limit'), 'the list still pages');
});

test('export: timezone makes a date alone in from / to, and in the createdAt[...] bounds, that whole day in the zone, as the reports read it; a timestamp stays exact; a bad zone is a 400 naming timezone, and the document says so', async (t) => {
  const clock = createManualClock(Date.parse('2026-11-30T03:00:00Z'));
  const weir = await startTestWeir(t, {}, { clock });
  const { api, testSecretKey } = await createMerchant(weir.url, 'Shop');
  // 22:00 on 29 November in New York, then 23:00 on 30 November there (04:00Z on 1 December).
  const late29 = (await api.post<Session>('/api/v1/checkout/sessions', sessionRequest())).body;
  clock.set(Date.parse('2026-12-01T04:00:00Z'));
  const late30 = (await api.post<Session>('/api/v1/checkout/sessions', sessionRequest())).body;

  const exported = async (query: string) => {
    const r = await fetch(`${weir.url}/api/v1/checkout/sessions/export?${query}`, {
      headers: { authorization: `Bearer ${testSecretKey}` },
    });
    t.is(r.status, 200, query);
    return parseCsv(await r.text())
      .slice(1)
      .map((row) => row[0]);
  };
  t.deepEqual(await exported('from=2026-11-30&to=2026-11-30'), [late29.id], 'UTC days without a zone');
  t.deepEqual(await exported('from=2026-11-30&to=2026-11-30&timezone=America/New_York'), [late30.id]);
  t.deepEqual(await exported('to=2026-11-29&timezone=America/New_York'), [late29.id]);
  t.deepEqual(await exported('from=2026-12-01&timezone=America/New_York'), []);
  t.deepEqual(await exported('from=2026-11-30T04:00:00Z&timezone=America/New_York'), [late30.id], 'a timestamp: exact');
  t.deepEqual(await exported('from=2026-11-30&to=2026-11-30&timezone=UTC'), [late29.id]);
  t.deepEqual(await exported('from=2026-11-30&timezone='), [late30.id, late29.id], 'empty: UTC');
  // The list's createdAt[...] bounds too: a date alone is the zone's day when the export is given one.
  t.deepEqual(await exported('createdAt[gte]=2026-11-30&createdAt[lte]=2026-11-30'), [late29.id]);
  t.deepEqual(await exported('createdAt[gte]=2026-11-30&createdAt[lte]=2026-11-30&timezone=America/New_York'), [
    late30.id,
  ]);
  t.deepEqual(await exported('createdAt[gt]=2026-11-29&timezone=America/New_York'), [late30.id]);
  t.deepEqual(await exported('createdAt[lt]=2026-11-30&timezone=America/New_York'), [late29.id]);
  t.deepEqual(
    await exported('dateField=createdAt&from=2026-11-30&to=2026-11-30&timezone=Asia/Tokyo'),
    [late29.id],
    'Tokyo: 30 November is 15:00Z on the 29th to 15:00Z on the 30th',
  );
  // The file is dated by the zone's day: at 04:00Z on 1 December it is still 30 November in New York.
  const fileOf = async (query: string) =>
    (
      await fetch(`${weir.url}/api/v1/checkout/sessions/export?${query}`, {
        headers: { authorization: `Bearer ${testSecretKey}` },
      })
    ).headers.get('content-disposition');
  t.is(await fileOf('timezone=America/New_York'), 'attachment; filename="checkout-sessions-2026-11-30.csv"');
  t.is(await fileOf(''), 'attachment; filename="checkout-sessions-2026-12-01.csv"');

  for (const zone of ['Mars/Olympus', '+02:00', 'EST5EDT!', 'Europe'])
    assertError(t, await api.get(`/api/v1/checkout/sessions/export?timezone=${encodeURIComponent(zone)}`), 400, {
      field: 'timezone',
    });
  type Operation = { parameters?: { name: string; in: string; description?: string }[] };
  const document = (await api.get<{ paths: Record<string, Record<string, Operation>> }>('/api/v1/openapi.json')).body;
  const parameters = document.paths['/api/v1/checkout/sessions/export']?.get?.parameters ?? [];
  t.regex(parameters.find((p) => p.name === 'timezone')?.description ?? '', /IANA time zone/);
  t.regex(
    parameters.find((p) => p.name === 'createdAt[lte]')?.description ?? '',
    /with `timezone`, a date alone is that day in the zone/,
  );
});
