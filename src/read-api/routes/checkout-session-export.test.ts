import test from 'ava';
import {
  canceled,
  confirmed,
  confirmedLate,
  detectedDai,
  detected,
  paymentFixture,
  sessionAfterEvents,
  sessionFixture,
} from '../../../machines/checkout-session.fixture.ts';
import { payerStatus } from '../../hosted/checkout-status.ts';
import { publicCheckoutSession } from '../../projections/public-views.ts';
import type { CheckoutSessionDoc } from '../../projections/collections.ts';
import { CUSTOMERS, type CustomerDoc } from '../../projections/customers.projection.ts';
import { createEmbeddedReadStore } from '../../read-store/embedded-read-store.ts';
import type { Collection, Filter, FindOptions } from '../../read-store/read-store.ts';
import { createManualClock } from '../../shared/clock.ts';
import { ValidationError } from '../../shared/errors.ts';
import type { ApiContext } from '../api-context.ts';
import { CUSTOMER_READS, EXPORT_BATCH, exportCheckoutSessions, sessionRows } from './checkout-session-export.ts';

test('an export reads the store a batch at a time and writes every session once, newest first', async (t) => {
  const store = createEmbeddedReadStore({ writes: 'trusted' });
  const stored = store.collection<CheckoutSessionDoc>('checkout_sessions');
  const total = EXPORT_BATCH * 2 + 7;
  for (let i = 0; i < total; i++) {
    const id = `cs_${String(i).padStart(5, '0')}`;
    // Pairs share a creation time, so the cursor must also order by id.
    const createdAt = new Date(Date.UTC(2026, 0, 1) + Math.floor(i / 2) * 1000).toISOString();
    await stored.put({ ...sessionFixture({ id, createdAt }), _id: id });
  }
  const limits: (number | undefined)[] = [];
  const counting: Collection<CheckoutSessionDoc> = {
    ...stored,
    find: (filter: Filter, options?: FindOptions) => {
      limits.push(options?.limit);
      return stored.find(filter, options);
    },
  };
  const lines: string[] = [];
  for await (const line of sessionRows(counting, store.collection<CustomerDoc>(CUSTOMERS), {
    organizationId: sessionFixture().organizationId,
  }))
    lines.push(line);
  t.true(lines[0]!.startsWith('id,createdAt,status,'));
  const ids = lines.slice(1).map((line) => line.split(',')[0]!);
  t.is(ids.length, total);
  t.is(new Set(ids).size, total);
  t.deepEqual(limits, [EXPORT_BATCH, EXPORT_BATCH, EXPORT_BATCH]);
  const created = lines.slice(1).map((line) => line.split(',')[1]!);
  t.deepEqual(created, [...created].sort().reverse());
});

test('an export whose from is after its to is a 400 naming to (as the reports answer), not an empty file', async (t) => {
  const store = createEmbeddedReadStore({ writes: 'trusted' });
  const run = exportCheckoutSessions(
    store.collection<CheckoutSessionDoc>('checkout_sessions'),
    store.collection<CustomerDoc>(CUSTOMERS),
    createManualClock(Date.parse('2026-03-02T00:00:00Z')),
  );
  const headers: Record<string, string> = {};
  const ctx = (query: Record<string, string>) =>
    ({
      query,
      state: { tenant: { organizationId: 'o1', environment: 'test' } },
      set: (name: string, value: string) => {
        headers[name] = value;
      },
    }) as unknown as ApiContext;
  const error = await t.throwsAsync(run(ctx({ from: '2026-03-02', to: '2026-03-01T23:59:59.999Z' })), {
    instanceOf: ValidationError,
  });
  t.is(error?.message, 'to: must not be before from');
  t.deepEqual(headers, {});
  // The same instant at both ends is a range of one instant, and so is a date and its midnight.
  await run(ctx({ from: '2026-03-02', to: '2026-03-02T00:00:00Z' }));
  t.regex(headers['Content-Type'] ?? '', /^text\/csv/);
});

test("an export's from / to and the list's createdAt bounds meet: the tighter of each holds, and a range they cross is a 400 naming both", async (t) => {
  const store = createEmbeddedReadStore({ writes: 'trusted' });
  const stored = store.collection<CheckoutSessionDoc>('checkout_sessions');
  for (const day of [1, 3, 5, 7, 9]) {
    const id = `cs_0${day}`;
    await stored.put({ ...sessionFixture({ id, createdAt: `2026-03-0${day}T12:00:00.000Z` }), _id: id });
  }
  const run = exportCheckoutSessions(
    stored,
    store.collection<CustomerDoc>(CUSTOMERS),
    createManualClock(Date.parse('2026-03-10T00:00:00Z')),
  );
  const exported = async (query: Record<string, string>) => {
    const ctx = {
      query,
      state: { tenant: { organizationId: sessionFixture().organizationId, environment: sessionFixture().environment } },
      set: () => {},
      body: undefined as unknown,
    };
    await run(ctx as unknown as ApiContext);
    const lines: string[] = [];
    for await (const chunk of ctx.body as AsyncIterable<string>) lines.push(String(chunk));
    return lines
      .join('')
      .trim()
      .split('\n')
      .slice(1)
      .map((line) => line.split(',')[0]);
  };
  t.deepEqual(await exported({}), ['cs_09', 'cs_07', 'cs_05', 'cs_03', 'cs_01']);
  // The list's bound is the tighter: from does not widen it back to the 1st.
  t.deepEqual(await exported({ 'createdAt[gte]': '2026-03-05', from: '2026-03-01' }), ['cs_09', 'cs_07', 'cs_05']);
  t.deepEqual(await exported({ 'createdAt[lt]': '2026-03-04', to: '2026-03-08' }), ['cs_03', 'cs_01']);
  // from / to the tighter: they hold.
  t.deepEqual(
    await exported({
      'createdAt[gte]': '2026-03-02',
      'createdAt[lte]': '2026-03-09',
      from: '2026-03-04',
      to: '2026-03-06',
    }),
    ['cs_05'],
  );
  const error = await t.throwsAsync(exported({ 'createdAt[gte]': '2026-03-08', to: '2026-03-05' }), {
    instanceOf: ValidationError,
  });
  t.is(error?.message, 'to: must not be before createdAt[gte]');
});

test('an export prints a Tron transaction hash as the API shows it, the bare 64-hex txID (kept as 0x… in the log); an EVM one as kept', async (t) => {
  const store = createEmbeddedReadStore({ writes: 'trusted' });
  const stored = store.collection<CheckoutSessionDoc>('checkout_sessions');
  const paidOn = (id: string, network: string, chainId: number, createdAt: string) => {
    const hash = `0x${id.repeat(32)}`;
    const payment = {
      ...paymentFixture(`t-${id}`, '300000000'),
      network,
      chainId,
      transactionHash: hash,
      status: 'confirmed' as const,
      detectedAt: createdAt,
      confirmedAt: createdAt,
      late: false,
    };
    // One with the completing transfer's hash, one (not complete) with its confirmed payment's alone.
    return sessionFixture({ id, createdAt, payments: [payment], transactionHash: id === 'ab' ? hash : null });
  };
  const sessions = [
    paidOn('ab', 'tron', 728126428, '2026-01-01T00:00:03.000Z'),
    paidOn('cd', 'tron-nile', 3448148188, '2026-01-01T00:00:02.000Z'),
    paidOn('ef', 'weir-testnet', 7357, '2026-01-01T00:00:01.000Z'),
  ];
  for (const session of sessions) await stored.put({ ...session, _id: session.id });
  const lines: string[] = [];
  for await (const line of sessionRows(stored, store.collection<CustomerDoc>(CUSTOMERS), {})) lines.push(line);
  const header = lines[0]!.trim().split(',');
  const hashes = lines.slice(1).map((line) => line.trim().split(',')[header.indexOf('transactionHash')]);
  t.deepEqual(hashes, ['ab'.repeat(32), 'cd'.repeat(32), `0x${'ef'.repeat(32)}`]);
  // The API's own form: the session's hash where it has one, else its payment's.
  t.is(publicCheckoutSession(sessions[0]!).transactionHash, hashes[0]!);
  t.is(publicCheckoutSession(sessions[1]!).payments[0]!.transactionHash, hashes[1]!);
});

test("an export names a session's linked customer (an invoice's) when the session collected no name or email, and keeps what it collected", async (t) => {
  const store = createEmbeddedReadStore({ writes: 'trusted' });
  const stored = store.collection<CheckoutSessionDoc>('checkout_sessions');
  const customers = store.collection<CustomerDoc>(CUSTOMERS);
  const tenant = { organizationId: sessionFixture().organizationId, environment: sessionFixture().environment };
  const customer = (id: string, name: string, email: string, organizationId = tenant.organizationId) =>
    ({ _id: id, id, ...tenant, organizationId, name, email }) as CustomerDoc;
  await customers.put(customer('cus_ada', 'Ada', 'ada@example.com'));
  // Another organization's customer under the id a session names is never read into this one's file.
  await customers.put(customer('cus_other', 'Mallory', 'mallory@example.com', 'another-org'));
  const sessions = [
    sessionFixture({ id: 'cs_invoice', createdAt: '2026-01-01T00:00:03.000Z', customerId: 'cus_ada' }),
    sessionFixture({
      id: 'cs_collected',
      createdAt: '2026-01-01T00:00:02.000Z',
      customerId: 'cus_ada',
      customerDetails: { name: 'Ada L.', email: 'ada.l@example.com' },
    } as Partial<CheckoutSessionDoc>),
    sessionFixture({ id: 'cs_foreign', createdAt: '2026-01-01T00:00:01.000Z', customerId: 'cus_other' }),
  ];
  for (const session of sessions) await stored.put({ ...session, _id: session.id });
  const lines: string[] = [];
  for await (const line of sessionRows(stored, customers, tenant)) lines.push(line);
  const header = lines[0]!.trim().split(',');
  const named = lines.slice(1).map((line) => {
    const cells = line.trim().split(',');
    return [cells[0], cells[header.indexOf('customerName')], cells[header.indexOf('customerEmail')]];
  });
  t.deepEqual(named, [
    ['cs_invoice', 'Ada', 'ada@example.com'],
    ['cs_collected', 'Ada L.', 'ada.l@example.com'],
    ['cs_foreign', '', ''],
  ]);
});

test("an export reads a batch's linked customers a few at a time, not all at once, and still names each row's own", async (t) => {
  const store = createEmbeddedReadStore({ writes: 'trusted' });
  const stored = store.collection<CheckoutSessionDoc>('checkout_sessions');
  const customers = store.collection<CustomerDoc>(CUSTOMERS);
  const tenant = { organizationId: sessionFixture().organizationId, environment: sessionFixture().environment };
  const total = EXPORT_BATCH + 20;
  for (let i = 0; i < total; i++) {
    const id = `cs_${String(i).padStart(5, '0')}`;
    const customerId = `cus_${String(i).padStart(5, '0')}`;
    const createdAt = new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();
    await stored.put({ ...sessionFixture({ id, createdAt, customerId }), _id: id });
    await customers.put({ _id: customerId, id: customerId, ...tenant, name: `Name ${i}`, email: '' } as CustomerDoc);
  }
  let inFlight = 0;
  let most = 0;
  // Each read answers a turn later, so reads started together overlap as they would on MongoDB.
  const counting: Collection<CustomerDoc> = {
    ...customers,
    get: async (id: string) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise<void>((resolve) => setImmediate(resolve));
      inFlight--;
      return customers.get(id);
    },
  };
  const lines: string[] = [];
  for await (const line of sessionRows(stored, counting, tenant)) lines.push(line);
  t.true(most <= CUSTOMER_READS, `${most} customer reads in flight at once`);
  t.true(most > 1, 'the reads still overlap');
  const header = lines[0]!.trim().split(',');
  const rows = lines.slice(1).map((line) => line.trim().split(','));
  t.is(rows.length, total);
  // Newest first, each with its own customer's name.
  for (const cells of rows) t.is(cells[header.indexOf('customerName')], `Name ${Number(cells[0]!.slice(3))}`);
  t.is(rows[0]![0], `cs_${String(total - 1).padStart(5, '0')}`);
});

test("an export tells which part of amountReceived came after the session closed (the late money the payer's page and the dashboard split off), 0 when none", async (t) => {
  const store = createEmbeddedReadStore({ writes: 'trusted' });
  const stored = store.collection<CheckoutSessionDoc>('checkout_sessions');
  // 1 USDC paid in time, the cancel, then 2 USDC confirmed after it: unpaid, 3 received, 2 of them late.
  const late = sessionAfterEvents(
    detected('t1', '100000000'),
    confirmed('t1'),
    canceled(),
    detected('t2', '200000000', '2026-01-01T00:21:00.000Z'),
    ...confirmedLate('t2', '200000000'),
  );
  const onTime = sessionAfterEvents(detected('t3', '100000000'), confirmed('t3'));
  // An 18-decimal token: 1.000000005 in time, the cancel, 2.000000005 late (3.00000001 received, each
  // part half a unit over: cut apart they made 2.00000000 late, a unit short of the rest).
  const fine = sessionAfterEvents(
    detectedDai('t4', '1000000005000000000'),
    confirmed('t4'),
    canceled(),
    detectedDai('t5', '2000000005000000000', '2026-01-01T00:21:00.000Z'),
    ...confirmedLate('t5', '200000000'),
  );
  // Late dust (1 wei): 0 at the 10^8 scale, yet late money, as the page's "less than 0.00000001".
  const dust = sessionAfterEvents(
    canceled(),
    detectedDai('t6', '1', '2026-01-01T00:21:00.000Z'),
    ...confirmedLate('t6', '0'),
  );
  const sessions = [
    { ...late, id: 'cs_late', createdAt: '2026-01-01T00:00:02.000Z' },
    { ...onTime, id: 'cs_on_time', createdAt: '2026-01-01T00:00:01.000Z' },
    { ...fine, id: 'cs_fine', createdAt: '2026-01-01T00:00:00.500Z' },
    { ...dust, id: 'cs_dust', createdAt: '2026-01-01T00:00:00.250Z' },
  ];
  for (const session of sessions) await stored.put({ ...session, _id: session.id });
  const lines: string[] = [];
  for await (const line of sessionRows(stored, store.collection<CustomerDoc>(CUSTOMERS), {})) lines.push(line);
  const header = lines[0]!.trim().split(',');
  const cells = lines.slice(1).map((line) => {
    const row = line.trim().split(',');
    const at = (name: string) => row[header.indexOf(name)];
    return [
      at('id'),
      at('status'),
      at('paymentStatus'),
      at('amountReceived'),
      at('amountReceivedAfterClose'),
      at('receivedAfterClose'),
    ];
  });
  t.deepEqual(cells, [
    ['cs_late', 'canceled', 'unpaid', '300000000', '200000000', 'true'],
    ['cs_on_time', 'open', 'unpaid', '100000000', '0', 'false'],
    ['cs_fine', 'canceled', 'unpaid', '300000001', '200000001', 'true'],
    ['cs_dust', 'canceled', 'unpaid', '0', '0', 'true'],
  ]);
  // What came before the close is amountReceived less the late part, as the page's Paid row shows it.
  const fineStatus = payerStatus(sessions[2]!, (network) => network, Date.parse('2026-01-01T01:00:00.000Z'));
  t.is(fineStatus.amountReceivedBeforeClose, (300000001n - 200000001n).toString());
});
