import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { hardhatAccounts } from '../../src/chain-ingest/evm/devnet/hardhat-accounts.ts';
import { SQLITE_EVENT_STORE_FILE } from '../../src/event-store/open-event-store.ts';
import { settleWithin } from '../../src/shared/settle-within.ts';
import { payingInBlocks, startTestDevnet } from '../support/evm-devnet.ts';
import { openSessionEventCounts } from '../support/session-event-counts.ts';
import { startNatsServer } from '../support/nats-server.ts';
import { startWebhookReceiver, type ReceivedWebhook } from '../support/webhook-receiver.ts';
import { ADMIN_TOKEN } from '../support/weir-harness.ts';
import { spawnWeir } from '../support/weir-process.ts';

const SESSIONS = 300;
const BATCH = 25;
const BATCHES = SESSIONS / BATCH;
const CREATE_CONCURRENCY = 6;
const CONFIRMATIONS = 3;
const BLOCK_INTERVAL_MS = 1000;
/** Everything after the chain is up is done within this; a wait that runs out says what was still missing. */
const BUDGET_MS = 170_000;

type Session = {
  id: string;
  status: string;
  amountReceived: string;
  addresses: { paymentAddress: string; asset: { currency: string } }[];
  payments: unknown[];
  sweeps: { transactionHash: string }[];
};
type Spawned = Awaited<ReturnType<typeof spawnWeir>>;
type WebhookEvent = { id: string; type: string; data: { object: { id: string } } };

/** mulberry32: a small seeded generator, so a failing run can be repeated with its seed. */
function seededRandom(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** The checkout_session.completed event ids received, by session id. */
function completedEventsBySession(all: ReceivedWebhook[]): Map<string, Set<string>> {
  const bySession = new Map<string, Set<string>>();
  for (const request of all) {
    const event = JSON.parse(request.body) as WebhookEvent;
    if (event.type !== 'checkout_session.completed') continue;
    const ids = bySession.get(event.data.object.id) ?? new Set<string>();
    ids.add(event.id);
    bySession.set(event.data.object.id, ids);
  }
  return bySession;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('weir serve on NATS killed with SIGKILL three times while 300 sessions are paid on a local chain: each paid session completes once, every checkout_session.completed arrives, every deposit is swept once', async (t) => {
  t.timeout(BUDGET_MS + 90_000, 'the kill -9 run went past its budget');
  const seed = Number(process.env['WEIR_KILL_SEED'] ?? Math.floor(Math.random() * 2 ** 32));
  t.log(`seed ${seed} (run again with WEIR_KILL_SEED=${seed})`);
  const random = seededRandom(seed);
  const between = (low: number, high: number) => low + Math.floor(random() * (high - low + 1));
  // The three moments, drawn from the seed: once k1 sessions are created (more in flight); right
  // after payment batch k2 is mined (its transfers being detected, the earlier ones confirmed); once
  // the receiver has a share f3 of the completions still to come after the second restart.
  const k1 = between(40, SESSIONS - 40);
  const k2 = between(2, BATCHES - 5);
  const f3 = 0.1 + 0.8 * random();
  const cents = Array.from({ length: SESSIONS }, () => BigInt(between(100, 5000))); // each session 1.00 to 50.00 USDC

  // The chain: a block a second with whatever is pending, so a batch of payments lands in one
  // block and blocks go on while Weir is down, as on a real network.
  const devnet = await startTestDevnet(t);
  const { chainId } = devnet.info;
  const { merchant, payBlock, merchantReceived } = await payingInBlocks(devnet, {
    intervalMs: BLOCK_INTERVAL_MS,
    morePayerKeys: [hardhatAccounts[5]!.privateKey, hardhatAccounts[6]!.privateKey],
  });

  const nats = await startNatsServer();
  t.teardown(() => nats.stop());
  const receiver = await startWebhookReceiver();
  t.teardown(() => receiver.close());
  const dataDir = await mkdtemp(join(tmpdir(), 'weir-kill-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const env = {
    NATS_URL: nats.url,
    WEIR_DEVNET_FILE: devnet.file,
    [`WEIR_CONFIRMATIONS_${chainId}`]: String(CONFIRMATIONS),
  };

  const started = Date.now();
  const deadline = started + BUDGET_MS;
  const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
  const remaining = () => Math.max(1, deadline - Date.now());

  // One `weir serve` at a time on the same data dir and NATS; each kill starts the next one.
  const processes: Spawned[] = [await spawnWeir({ dataDir, env })];
  const current = () => processes[processes.length - 1]!;
  t.teardown(() => current().kill('SIGKILL'));
  let over = false; // set first thing at teardown (teardowns run last-registered first): no restart after it
  t.teardown(() => {
    over = true;
  });
  let down = false;
  let wakeOnRestart: () => void = () => {};
  let restarted = new Promise<void>((resolve) => {
    wakeOnRestart = resolve;
  });
  const kills: string[] = [];
  /** When each replacement answered /health: a delivery before it came from a process that was then killed. */
  const upAgainAt: number[] = [];
  let failed = false;
  const fail = (what: string): never => {
    if (!failed) {
      for (const [i, p] of processes.entries()) {
        t.log(`--- weir serve #${i + 1}, last lines:\n${p.output().trim().split('\n').slice(-25).join('\n')}`);
      }
    }
    failed = true;
    throw new Error(`after ${elapsed()} (seed ${seed}): ${what}`);
  };
  /** SIGKILL the running process, run `whileDown`, start the next one on the same data dir (ready once /health answers). */
  const killAndRestart = async (moment: string, state: string, whileDown?: () => Promise<void>) => {
    const at = elapsed();
    down = true;
    await current().kill('SIGKILL');
    await whileDown?.();
    const restartStarted = Date.now();
    if (over) return;
    const next = await spawnWeir({ dataDir, env });
    processes.push(next);
    if (over) await next.kill('SIGKILL');
    upAgainAt.push(Date.now());
    down = false;
    const wake = wakeOnRestart;
    restarted = new Promise<void>((resolve) => {
      wakeOnRestart = resolve;
    });
    wake();
    kills.push(`at ${at} ${moment} (${state}); up again in ${Date.now() - restartStarted} ms`);
  };

  let sentAgain = 0;
  let keyInUse = 0;
  let behind = 0;
  let limited = 0;
  /**
   * One API call that outlives the kills: a call cut off by one is sent again, with the same
   * Idempotency-Key, to the process that replaces it; a 503 (read models behind) is asked again, a 429 after its Retry-After.
   * A 409 idempotency_request_in_progress (the key's first request died with its process) is returned as
   * 'key_in_use' for the caller to come back to later.
   */
  async function call<T>(method: string, path: string, key: string, body?: unknown, idempotencyKey?: string) {
    for (;;) {
      if (Date.now() > deadline) fail(`${method} ${path} got no final answer`);
      const weir = current();
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
          signal: AbortSignal.timeout(Math.min(30_000, remaining())),
        });
      } catch (error) {
        if (!down && weir === current()) fail(`${method} ${path} failed on a live Weir: ${String(error)}`);
        sentAgain++;
        if (weir === current() && 'timedOut' in (await settleWithin(restarted, remaining()))) {
          fail(`weir serve #${processes.length + 1} never came up`);
        }
        continue;
      }
      const text = await response.text();
      // The polls below read 300 sessions again and again: past the key's rate limit, wait as told, as a client does.
      if (response.status === 429) {
        limited++;
        await pause(Number(response.headers.get('retry-after') ?? '1') * 1000);
        continue;
      }
      if (response.status === 503) {
        behind++;
        await pause(100);
        continue;
      }
      if (response.status === 409 && text.includes('"idempotency_request_in_progress"')) {
        keyInUse++;
        return 'key_in_use' as const;
      }
      if (response.status !== 200) fail(`${method} ${path} answered ${response.status}: ${text}`);
      return JSON.parse(text) as T;
    }
  }
  async function mustCall<T>(method: string, path: string, key: string, body?: unknown) {
    const answer = await call<T>(method, path, key, body);
    return answer === 'key_in_use' ? fail(`${method} ${path}: unexpected 409`) : answer;
  }

  const organization = await mustCall<{ testSecretKey: string }>('POST', '/admin/organizations', ADMIN_TOKEN, {
    name: 'Kill -9 Shop',
  });
  const key = organization.testSecretKey;
  await mustCall('POST', '/api/v1/organization/withdrawal-addresses', key, { chainId, address: merchant });
  await mustCall('POST', '/api/v1/webhook-endpoints', key, {
    description: 'orders',
    url: receiver.url,
    enabledEvents: { events: ['checkout_session.completed'] },
  });

  // Phase 1: 300 sessions created, 6 at a time, each with its own Idempotency-Key; the first kill
  // once k1 are created. A create cut off by the kill is sent again to the next process; if its key
  // is still held by the dead request (409), it is come back to later while the others go on.
  const created: (Session & { index: number })[] = [];
  const onCreated = new Set<() => void>();
  const fresh = Array.from({ length: SESSIONS }, (_, i) => i);
  const heldKeys: { index: number; retryAt: number }[] = [];
  const createOne = async (index: number) => {
    const answer = await call<Session>(
      'POST',
      '/api/v1/checkout/sessions',
      key,
      {
        successUrl: 'https://shop.example/ok',
        lineItems: {
          data: [
            {
              priceData: {
                currency: 'usdc',
                unitAmount: String(cents[index]! * 1_000_000n),
                productData: { name: 'Thing' },
              },
            },
          ],
        },
      },
      `session-${seed}-${index}`,
    );
    if (answer === 'key_in_use') {
      heldKeys.push({ index, retryAt: Date.now() + 2000 });
      return;
    }
    created.push({ ...answer, index });
    for (const notify of onCreated) notify();
  };
  const creator = async () => {
    for (;;) {
      const index = fresh.shift();
      if (index !== undefined) {
        await createOne(index);
        continue;
      }
      const due = heldKeys.findIndex((h) => h.retryAt <= Date.now());
      if (due >= 0) await createOne(heldKeys.splice(due, 1)[0]!.index);
      else if (heldKeys.length > 0)
        await pause(250); // asks again every 2 s until Weir takes the key back
      else return;
    }
  };
  const creation = Promise.all(Array.from({ length: CREATE_CONCURRENCY }, creator));
  creation.catch(() => {}); // awaited below; failures surface there
  const untilCreated = async (count: number, what: string) => {
    const enough = new Promise<void>((resolve) => {
      const check = () => {
        if (created.length < count) return;
        onCreated.delete(check);
        resolve();
      };
      onCreated.add(check);
      check();
    });
    if ('timedOut' in (await settleWithin(enough, remaining()))) {
      fail(
        `${created.length} of ${count} sessions created for ${what} (${heldKeys.length} keys held by dead requests)`,
      );
    }
  };
  await untilCreated(k1, 'the first kill');
  await killAndRestart('while sessions were being created', `${created.length} of ${SESSIONS} created`);

  // Phase 2: pay in batches of 25 spread over the payers, each batch in one block; the second kill
  // right after batch k2 is mined, the next batch paid while Weir is down.
  let paid = 0;
  const payBatch = async (batch: number) => {
    await untilCreated((batch + 1) * BATCH, `payment batch ${batch + 1}`);
    const sessions = created.slice(batch * BATCH, (batch + 1) * BATCH);
    await payBlock(
      sessions.map((session) => ({ session, amount: cents[session.index]! * 10_000n })),
      remaining(),
    ).catch((error: unknown) => fail(`payment batch ${batch + 1}: ${(error as Error).message}`));
    paid += sessions.length;
  };
  const completionsReceived = () => completedEventsBySession(receiver.received).size;

  let thirdKill: Promise<void> | undefined;
  for (let batch = 0; batch < BATCHES; batch++) {
    await payBatch(batch);
    if (batch !== k2 - 1) continue;
    const next = ++batch;
    // The batch paid while down needs its sessions: created by then, not waiting for the restart.
    await untilCreated((next + 1) * BATCH, `payment batch ${next + 1}`);
    await killAndRestart(
      'while payments were being detected and confirmed, the next batch paid while down',
      `${paid} paid, ${completionsReceived()} completions received`,
      () => payBatch(next),
    );
    // Phase 3: the third kill once the receiver has had a share f3 of the completions still to come.
    const received = completionsReceived();
    const target = received + 1 + Math.floor(f3 * (SESSIONS - received - 2));
    thirdKill = (async () => {
      const reached = await settleWithin(
        receiver.waitFor(() => completionsReceived() >= target, remaining()),
        remaining(),
      );
      if (!('value' in reached))
        fail(`only ${completionsReceived()} completions received, the third kill waits for ${target}`);
      await killAndRestart(
        'while webhooks were being delivered',
        `${completionsReceived()} of ${SESSIONS} completions received, ${paid} paid`,
      );
    })();
    thirdKill.catch(() => {}); // awaited below; failures surface there
  }
  await creation;
  await (thirdKill ?? fail('the third kill was never set up'));
  t.log(`all ${paid} sessions paid and the third restart done at ${elapsed()}`);

  // Every paid session complete, read over the API of the last process, with its payment once.
  const byId = new Map(created.map((s) => [s.id, s]));
  t.is(byId.size, SESSIONS, 'a create sent again answered with the session it had created, never a second one');
  const latest = new Map<string, Session>();
  const refresh = async (ids: string[]) => {
    for (const id of ids) latest.set(id, await mustCall<Session>('GET', `/api/v1/checkout/sessions/${id}`, key));
  };
  for (;;) {
    const open = [...byId.keys()].filter((id) => latest.get(id)?.status !== 'complete');
    if (open.length === 0) break;
    if (Date.now() > deadline) {
      fail(`${open.length} sessions not complete: ${open.slice(0, 10).map((id) => `${id} ${latest.get(id)?.status}`)}`);
    }
    await refresh(open);
    await pause(200);
  }
  for (const [id, session] of latest) {
    t.is(session.amountReceived, String(cents[byId.get(id)!.index]! * 1_000_000n), id);
    t.is(session.payments.length, 1, `${id}: its payment is recorded once: ${JSON.stringify(session.payments)}`);
  }

  // Every checkout_session.completed received at least once, each session with one event id.
  const delivered = await settleWithin(
    receiver.waitFor((all) => completedEventsBySession(all).size >= SESSIONS, remaining()),
    remaining(),
  );
  if (!('value' in delivered)) {
    const missing = [...byId.keys()].filter((id) => !completedEventsBySession(receiver.received).has(id));
    fail(`checkout_session.completed never received for ${missing.length} sessions: ${missing.slice(0, 10)}`);
  }
  const eventIds = completedEventsBySession(receiver.received);
  t.deepEqual(
    [...byId.keys()].filter((id) => eventIds.get(id)?.size !== 1),
    [],
    'each session has one checkout_session.completed event id',
  );

  // Every deposit swept to the merchant: the merchant holds exactly what was paid.
  const paidTotal = cents.reduce((sum, c) => sum + c * 10_000n, 0n);
  for (;;) {
    const unswept = [...latest.values()].filter((s) => s.sweeps.length === 0).map((s) => s.id);
    const received = await merchantReceived();
    if (unswept.length === 0 && received === paidTotal) break;
    if (Date.now() > deadline)
      fail(`${unswept.length} sessions not swept; the merchant got ${received} of ${paidTotal}`);
    await refresh(unswept);
    await pause(200);
  }

  // The log: one CheckoutSessionCompleted and one FundsSwept that moved funds per session, no session twice.
  const { db, perSession } = openSessionEventCounts(join(dataDir, SQLITE_EVENT_STORE_FILE));
  const completions = perSession('CheckoutSessionCompleted');
  const sweeps = perSession('FundsSwept');
  const streams = db
    .prepare(`SELECT count(DISTINCT stream_id) AS n FROM events WHERE stream_id LIKE 'checkout_session-%'`)
    .get() as { n: number };
  db.close();
  t.is(streams.n, SESSIONS, 'no session was created twice');
  t.deepEqual(
    [...byId.keys()].filter((id) => completions.get(id) !== 1),
    [],
    'each session completed once in the log',
  );
  t.deepEqual(
    [...byId.keys()].filter((id) => sweeps.get(id) !== 1),
    [],
    'each deposit swept once in the log',
  );
  const health = await fetch(`${current().url}/health`);
  t.is(health.status, 200, await health.text());

  // A duplicate is put down to the kill of the process that sent its first delivery (acknowledged, not yet recorded).
  const first = new Map<string, number>();
  const duplicatesByKill = upAgainAt.map(() => 0);
  let duplicatesWithoutKill = 0;
  for (const request of receiver.received) {
    const id = (JSON.parse(request.body) as WebhookEvent).id;
    const at = first.get(id);
    if (at === undefined) first.set(id, request.at);
    else if (upAgainAt.some((up) => up > at)) duplicatesByKill[upAgainAt.findIndex((up) => up > at)]!++;
    else duplicatesWithoutKill++;
  }
  const deliveries = receiver.received.length;
  t.log(`kills:\n  ${kills.join('\n  ')}`);
  t.log(
    `checkout_session.completed: ${first.size} event ids in ${deliveries} deliveries, ${deliveries - first.size} duplicates (${duplicatesByKill.map((n, i) => `${n} after kill ${i + 1}`).join(', ')}, ${duplicatesWithoutKill} from the last process)`,
  );
  t.log(
    `calls sent again after a kill ${sentAgain}, 409 idempotency_request_in_progress ${keyInUse}, 503 ${behind}, 429 ${limited}`,
  );
  t.log(`merchant swept ${paidTotal} USDC units; run time ${elapsed()} (seed ${seed})`);
});
