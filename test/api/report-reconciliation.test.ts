import test from 'ava';
import { createManualClock } from '../../src/shared/clock.ts';
import { eventually } from '../support/api-client.ts';
import { chainPublisher, randomHash } from '../support/chain-publisher.ts';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';
import { assertError, getSession, type Page, payInFull, payPart, reveal, type Session } from './helpers.ts';

type Row = Record<string, string | number | null>;
type Incoming = { amount: string; confirmedAt: string | null; type: string };

/**
 * An analyst's month closed day by day: the volume report counts each payment at its confirmation,
 * so each day's row must be the confirmed incoming transactions confirmed that day (UTC), found by
 * `confirmedAt[…]` bounds on `GET /transactions`, not only the whole range's.
 */
test('volume reconciles day by day with GET /transactions bounded on confirmedAt: a payment just before midnight UTC is that day’s, an overpayment days later its own day’s, a day with none has neither', async (t) => {
  const clock = createManualClock(Date.parse('2026-03-01T23:30:00Z'));
  const weir = await startTestWeir(t, {}, { clock });
  const { api } = await createMerchant(weir.url, 'Shop');
  const create = async (unitAmount: string) => {
    const made = await api.post<Session>('/api/v1/checkout/sessions', sessionRequest(unitAmount, 1));
    t.is(made.status, 200, JSON.stringify(made.body));
    return made.body;
  };
  // 1 March 23:30 UTC: 3.00 paid (2 March in Paris, 1 March in UTC, as the reports count).
  const first = await create('300000000');
  const firstShown = await reveal(weir, api, first.id);
  await payInFull(weir, api, first);
  // 2 March 00:30 UTC: 2.50 paid; a third of 3.00 paid on another.
  clock.set(Date.parse('2026-03-02T00:30:00Z'));
  await payInFull(weir, api, await create('250000000'));
  await payPart(weir, api, (await create('300000000')).id);
  // 4 March: 0.75 more reaches the first session's address, an overpayment.
  clock.set(Date.parse('2026-03-04T12:00:00Z'));
  const chain = chainPublisher(weir.bus);
  const blockHash = randomHash();
  await chain.transfer({ to: firstShown.address, amount: '750000', blockNumber: 730_000, blockHash });
  await chain.final(730_000, blockHash);
  await eventually(
    async () => ((await getSession(api, first.id)).amountReceived === '375000000' ? true : undefined),
    'the overpayment',
  );

  const volume = await api.get<{ data: Row[] }>('/api/v1/reports/volume?interval=day&from=2026-03-01&to=2026-03-31');
  t.is(volume.status, 200, JSON.stringify(volume.body));
  t.deepEqual(
    volume.body.data.map((r) => [r.period, r.payments, r.grossVolume]),
    [
      ['2026-03-01T00:00:00.000Z', 1, '300000000'],
      ['2026-03-02T00:00:00.000Z', 2, '350000000'],
      ['2026-03-04T00:00:00.000Z', 1, '75000000'],
    ],
  );
  const confirmedOn = async (day: string) => {
    const page = await api.get<Page<Incoming>>(
      `/api/v1/transactions?type=incoming&status=confirmed&confirmedAt[gte]=${day}&confirmedAt[lte]=${day}`,
    );
    t.is(page.status, 200, JSON.stringify(page.body));
    return page.body.data;
  };
  for (const day of ['2026-03-01', '2026-03-02', '2026-03-03', '2026-03-04']) {
    const row = volume.body.data.find((r) => String(r.period).startsWith(day));
    const transactions = await confirmedOn(day);
    t.is(transactions.length, row ? Number(row.payments) : 0, day);
    t.is(
      transactions.reduce((sum, tx) => sum + BigInt(tx.amount), 0n).toString(),
      String(row?.grossVolume ?? '0'),
      day,
    );
    for (const tx of transactions) t.is(tx.confirmedAt?.slice(0, 10), day);
  }
  // A timestamp bound is exact: the half hour around midnight holds both sides of it.
  const aroundMidnight = await api.get<Page<Incoming>>(
    '/api/v1/transactions?confirmedAt[gt]=2026-03-01T23:00:00Z&confirmedAt[lt]=2026-03-02T01:00:00Z',
  );
  t.is(aroundMidnight.body.count, 3);
  assertError(t, await api.get('/api/v1/transactions?confirmedAt[gte]=March'), 400, { field: 'confirmedAt[gte]' });
  assertError(t, await api.get('/api/v1/transactions?confirmedAt[gte]=2026-03-04&confirmedAt[lte]=2026-03-03'), 400, {
    field: 'confirmedAt[lte]',
  });
});

test('reports in the business’s time zone: timezone=America/New_York puts each payment on its day there across the change to daylight saving, reads a date-only from / to as whole days there, and names the zone; a zone that is not one is a 400', async (t) => {
  // 23:30 on Saturday 7 March in New York (4:30 UTC on the 8th), then 23:30 on Sunday 8 March (EDT: 3:30 UTC on the 9th).
  const clock = createManualClock(Date.parse('2026-03-08T04:30:00Z'));
  const weir = await startTestWeir(t, {}, { clock });
  const { api, testSecretKey } = await createMerchant(weir.url, 'Shop');
  const pay = async (unitAmount: string) => {
    const made = await api.post<Session>('/api/v1/checkout/sessions', sessionRequest(unitAmount, 1));
    t.is(made.status, 200, JSON.stringify(made.body));
    await payInFull(weir, api, made.body);
  };
  await pay('100000000');
  clock.set(Date.parse('2026-03-09T03:30:00Z'));
  await pay('200000000');
  const report = async (query: string) => {
    const answer = await api.get<{ timezone: string; data: Row[] }>(`/api/v1/reports/${query}`);
    t.is(answer.status, 200, JSON.stringify(answer.body));
    return answer.body;
  };
  const newYork = await report('volume?interval=day&timezone=America/New_York&from=2026-03-08&to=2026-03-08');
  t.is(newYork.timezone, 'America/New_York');
  // Sunday 8 March there: from its midnight (5:00 UTC) to the next (4:00 UTC, 23 hours later).
  t.deepEqual(
    newYork.data.map((r) => [r.period, r.payments, r.grossVolume]),
    [['2026-03-08T05:00:00.000Z', 1, '200000000']],
  );
  const utc = await report('volume?interval=day&from=2026-03-08&to=2026-03-08');
  t.is(utc.timezone, 'UTC');
  t.deepEqual(
    utc.data.map((r) => [r.period, r.payments, r.grossVolume]),
    [['2026-03-08T00:00:00.000Z', 1, '100000000']],
  );
  // The CSV has the same rows: March in New York starts at its midnight there.
  const csv = await fetch(`${weir.url}/api/v1/reports/volume?interval=month&timezone=America/New_York&format=csv`, {
    headers: { authorization: `Bearer ${testSecretKey}` },
  });
  t.is(csv.status, 200);
  t.regex((await csv.text()).split('\r\n')[1] ?? '', /^2026-03-01T05:00:00\.000Z,2026-03-01,,usdc,2,300000000,/);
  for (const zone of ['Mars/Olympus_Mons', '+01:00', 'EST'])
    assertError(t, await api.get(`/api/v1/reports/volume?timezone=${encodeURIComponent(zone)}`), 400, {
      field: 'timezone',
    });
});
