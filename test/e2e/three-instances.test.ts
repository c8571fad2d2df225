import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { payingInBlocks, startTestDevnet } from '../support/evm-devnet.ts';
import { openSessionEventCounts } from '../support/session-event-counts.ts';
import { sharedInstanceKeys } from '../support/instance-keys.ts';
import { startNatsServer } from '../support/nats-server.ts';
import { scrapeMetrics } from '../support/metrics-scrape.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';
import { ADMIN_TOKEN } from '../support/weir-harness.ts';
import { spawnWeir } from '../support/weir-process.ts';

/*
 * Three `weir serve` on one NATS and one SQLite event store file, each with its own data dir and
 * embedded read store; requests spread over them; one is killed -9 every KILL_EVERY_MS and started
 * again while sessions are created and paid on the local chain. The issue asks for 1,000 sessions
 * and a kill every 20 s; CI runs the defaults below (bounded: about two minutes here), and
 * WEIR_THREE_SESSIONS / WEIR_THREE_KILL_EVERY_MS run the long one.
 */
const SESSIONS = Number(process.env['WEIR_THREE_SESSIONS'] ?? 60);
/** A share of them left unpaid, set to expire a minute (the least allowed) after they are created. */
const UNPAID = Math.max(2, Math.floor(SESSIONS / 10));
const KILL_EVERY_MS = Number(process.env['WEIR_THREE_KILL_EVERY_MS'] ?? 6_000);
const BATCH = 10;
/** Between payment batches, so creating and paying spans several kills. */
const BATCH_EVERY_MS = Number(process.env['WEIR_THREE_BATCH_EVERY_MS'] ?? 3_000);
const CONFIRMATIONS = 2;
const BUDGET_MS = Number(process.env['WEIR_THREE_BUDGET_MS'] ?? 240_000);

type Session = {
  id: string;
  status: string;
  addresses: { paymentAddress: string; asset: { currency: string } }[];
  sweeps: { transactionHash: string }[];
};
type Spawned = Awaited<ReturnType<typeof spawnWeir>>;
type WebhookEvent = { id: string; type: string; data: { object: { id: string } } };

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test(`three weir serve on one NATS and one event store file, one killed -9 every ${KILL_EVERY_MS / 1000} s: ${SESSIONS} sessions complete once, swept once, their webhooks arrive, expiries fire once`, async (t) => {
  t.timeout(BUDGET_MS + 120_000, 'the three-instance run went past its budget');
  const devnet = await startTestDevnet(t);
  const { chainId } = devnet.info;
  const { merchant, payBlock, merchantReceived } = await payingInBlocks(devnet, { intervalMs: 1000 });

  const nats = await startNatsServer();
  t.teardown(() => nats.stop());
  const receiver = await startWebhookReceiver();
  t.teardown(() => receiver.close());
  const root = await mkdtemp(join(tmpdir(), 'weir-three-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  const eventStoreFile = join(root, 'shared', 'events.sqlite3');
  const env = {
    ...sharedInstanceKeys(),
    NATS_URL: nats.url,
    WEIR_EVENT_STORE_FILE: eventStoreFile,
    WEIR_LEASE_TTL: '2',
    // One master key for all: a webhook secret sealed by one instance is opened by another.
    WEIR_MASTER_KEY: randomBytes(32).toString('base64'),
    WEIR_DEVNET_FILE: devnet.file,
    [`WEIR_CONFIRMATIONS_${chainId}`]: String(CONFIRMATIONS),
  };
  const started = Date.now();
  const deadline = started + BUDGET_MS;
  const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
  const spawn = (i: number) => spawnWeir({ dataDir: join(root, `weir-${i}`), env });

  // Started one after the other: the first takes every work, the others stand by.
  const instances: (Spawned | null)[] = [];
  for (let i = 0; i < 3; i++) instances.push(await spawn(i));
  t.teardown(async () => {
    for (const instance of instances) await instance?.kill('SIGKILL');
  });
  let failed = false;
  const fail = (what: string): never => {
    if (!failed)
      for (const [i, p] of instances.entries())
        if (p) t.log(`--- weir serve ${i}, last lines:\n${p.output().trim().split('\n').slice(-20).join('\n')}`);
    failed = true;
    throw new Error(`after ${elapsed()}: ${what}`);
  };

  // The killer: every KILL_EVERY_MS the next instance in turn is killed -9 and started again.
  let killing = true;
  const kills: string[] = [];
  const startKiller = async () => {
    for (let turn = 0; killing; turn++) {
      await pause(KILL_EVERY_MS);
      if (!killing) return;
      const i = turn % 3;
      const victim = instances[i]!;
      instances[i] = null;
      await victim.kill('SIGKILL');
      const at = elapsed();
      const restarted = Date.now();
      instances[i] = await spawn(i);
      kills.push(`#${i} at ${at}, up again in ${Date.now() - restarted} ms`);
    }
  };

  let callNumber = 0;
  let sentAgain = 0;
  /** One API call, spread round-robin over the live instances; sent again (same Idempotency-Key) to another when cut off. */
  async function call<T>(method: string, path: string, key: string, body?: unknown, idempotencyKey?: string) {
    for (;;) {
      if (Date.now() > deadline) fail(`${method} ${path} got no final answer`);
      const live = instances.filter((p): p is Spawned => p !== null);
      const weir = live[callNumber++ % live.length]!;
      let response: Response;
      try {
        response = await fetch(`${weir.url}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${key}`,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(30_000),
        });
      } catch {
        sentAgain++;
        await pause(100);
        continue;
      }
      const text = await response.text();
      // 503: that instance's read models are behind; 409 request in progress: its first request died with its process;
      // 401 and 404: the key or the record not read there yet (a write made through another instance).
      if (
        response.status === 503 ||
        (response.status === 401 && Date.now() - started < 60_000 && !key.startsWith(ADMIN_TOKEN)) ||
        (response.status === 409 && text.includes('"idempotency_request_in_progress"')) ||
        (response.status === 404 && method === 'GET')
      ) {
        await pause(200);
        continue;
      }
      if (response.status !== 200) fail(`${method} ${path} answered ${response.status}: ${text}`);
      return JSON.parse(text) as T;
    }
  }

  const organization = await call<{ testSecretKey: string }>('POST', '/admin/organizations', ADMIN_TOKEN, {
    name: 'Three Instances Shop',
  });
  const key = organization.testSecretKey;
  await call('POST', '/api/v1/organization/withdrawal-addresses', key, { chainId, address: merchant }, 'wallet');
  await call(
    'POST',
    '/api/v1/webhook-endpoints',
    key,
    {
      description: 'orders',
      url: receiver.url,
      enabledEvents: { events: ['checkout_session.completed', 'checkout_session.expired'] },
    },
    'endpoint',
  );

  // Every instance has read the setup (the endpoint was written last) before the sessions spread over them.
  for (const instance of instances) {
    for (;;) {
      const listed = await fetch(`${instance!.url}/api/v1/webhook-endpoints`, {
        headers: { authorization: `Bearer ${key}` },
      });
      if (listed.status === 200 && ((await listed.json()) as { data: unknown[] }).data.length === 1) break;
      if (Date.now() > deadline) fail('the setup was never read by every instance');
      await pause(100);
    }
  }
  const killer = startKiller();
  killer.catch(() => {});
  const cents = (i: number) => BigInt(100 + ((i * 37) % 4900));
  const create = (i: number, expiresAt?: string) =>
    call<Session>(
      'POST',
      '/api/v1/checkout/sessions',
      key,
      {
        successUrl: 'https://shop.example/ok',
        ...(expiresAt ? { expiresAt } : {}),
        lineItems: {
          data: [
            {
              priceData: {
                currency: 'usdc',
                unitAmount: String(cents(i) * 1_000_000n),
                productData: { name: 'Thing' },
              },
            },
          ],
        },
      },
      `three-${i}`,
    );
  // The unpaid ones first, so their minute runs out while the others are paid.
  const unpaid: Session[] = [];
  for (let i = 0; i < UNPAID; i++) unpaid.push(await create(SESSIONS + i, new Date(Date.now() + 65_000).toISOString()));
  const paid: Session[] = [];
  for (let first = 0; first < SESSIONS; first += BATCH) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(BATCH, SESSIONS - first) }, (_, k) => create(first + k)),
    );
    // Paid at once, whichever instance created them: the follower's owner reads no block before its
    // own read models have caught up with the log (watchedCurrent), so no payment goes unseen.
    await payBlock(
      batch.map((session, k) => ({ session, amount: cents(first + k) * 10_000n })),
      60_000,
    ).catch((error: unknown) => fail(`payment ${(error as Error).message}`));
    paid.push(...batch);
    await pause(BATCH_EVERY_MS);
  }
  t.log(`${paid.length} sessions paid, ${unpaid.length} left to expire, at ${elapsed()}`);

  // Every paid session complete and swept, every unpaid one expired, read over the API of any instance.
  const status = new Map<string, Session>();
  const done = (s: Session | undefined, paidOne: boolean) =>
    paidOne ? s?.status === 'complete' && s.sweeps.length > 0 : s?.status === 'expired';
  for (;;) {
    const open = [...paid.map((s) => [s, true] as const), ...unpaid.map((s) => [s, false] as const)].filter(
      ([s, paidOne]) => !done(status.get(s.id), paidOne),
    );
    if (open.length === 0) break;
    if (Date.now() > deadline)
      fail(
        `${open.length} not done: ${open
          .slice(0, 8)
          .map(([s, paidOne]) => `${s.id} (${paidOne ? 'paid' : 'unpaid'}) ${JSON.stringify(status.get(s.id))}`)}`,
      );
    for (const [s] of open.slice(0, 20))
      status.set(s.id, await call<Session>('GET', `/api/v1/checkout/sessions/${s.id}`, key));
    await pause(500);
  }
  const paidTotal = paid.reduce((sum, _s, i) => sum + cents(i) * 10_000n, 0n);
  for (;;) {
    const received = await merchantReceived();
    if (received === paidTotal) break;
    if (Date.now() > deadline) fail(`the merchant got ${received} of ${paidTotal}`);
    await pause(500);
  }

  // Every checkout_session.completed and .expired event id received at least once.
  const eventsOf = (type: string) => {
    const bySession = new Map<string, Set<string>>();
    for (const request of receiver.received) {
      const event = JSON.parse(request.body) as WebhookEvent;
      if (event.type !== type) continue;
      bySession.set(event.data.object.id, (bySession.get(event.data.object.id) ?? new Set()).add(event.id));
    }
    return bySession;
  };
  const waited = await receiver
    .waitFor(
      () =>
        eventsOf('checkout_session.completed').size >= paid.length &&
        eventsOf('checkout_session.expired').size >= unpaid.length,
      Math.max(1, deadline - Date.now()),
    )
    .then(
      () => true,
      () => false,
    );
  if (!waited)
    fail(
      `webhooks received: ${eventsOf('checkout_session.completed').size}/${paid.length} completed, ${eventsOf('checkout_session.expired').size}/${unpaid.length} expired`,
    );
  killing = false;
  await killer;

  // The shared log: one completion, one sweep and one expiry per session, and no sweep that failed on a taken nonce.
  const { db, perSession } = openSessionEventCounts(eventStoreFile);
  const completions = perSession('CheckoutSessionCompleted');
  const sweeps = perSession('FundsSwept');
  const expiries = perSession('CheckoutSessionExpired');
  const eventTypes = db.prepare('SELECT type, count(*) AS n FROM events GROUP BY type').all() as {
    type: string;
    n: number;
  }[];
  db.close();
  t.deepEqual(
    paid.filter((s) => completions.get(s.id) !== 1).map((s) => s.id),
    [],
    'each paid session completed once',
  );
  t.deepEqual(
    paid.filter((s) => sweeps.get(s.id) !== 1).map((s) => s.id),
    [],
    'each deposit swept once',
  );
  t.deepEqual(
    unpaid.filter((s) => expiries.get(s.id) !== 1).map((s) => s.id),
    [],
    'each unpaid session expired once',
  );
  t.is(
    paid.filter((s) => expiries.has(s.id)).length + unpaid.filter((s) => completions.has(s.id)).length,
    0,
    'no paid session expired, no unpaid one completed',
  );

  // Ownership moves as the instances saw them (the live ones' counters).
  let moves = 0;
  for (const instance of instances)
    if (instance)
      moves += (await scrapeMetrics(instance.url)).value('weir_ownership_moves_total', { move: 'acquired' });
  const deliveries = receiver.received.length;
  const ids = new Set(receiver.received.map((r) => (JSON.parse(r.body) as WebhookEvent).id)).size;
  t.log(`kills (${kills.length}):\n  ${kills.join('\n  ')}`);
  t.log(
    `sessions: ${paid.length} paid, completed once each; ${sweeps.size} swept once each; ${expiries.size} expired once each`,
  );
  t.log(`webhooks: ${ids} event ids in ${deliveries} deliveries (${deliveries - ids} duplicates)`);
  t.log(`calls sent again after a kill: ${sentAgain}; work acquisitions counted by the live instances: ${moves}`);
  t.log(
    `sweep events: ${eventTypes
      .filter((e) => /Sweep/.test(e.type))
      .map((e) => `${e.type} ${e.n}`)
      .join(', ')}`,
  );
  t.log(`run time ${elapsed()}`);
});
