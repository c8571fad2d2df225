/**
 * Render time of the dashboard's checkout sessions list with 10,000 sessions, beside a bare Koa app
 * answering a static page of the same size, in the same run (issue 16: p95 under 100 ms server time).
 *
 *   node --import tsx bench/dashboard.ts [--sessions 10000] [--iterations 200] [--warmup 20] [--json FILE]
 *     [--profile FILE.cpuprofile]
 *   (npm run bench:dashboard)
 *
 * Weir starts as `weir serve` does by default (SQLite log, embedded read store, in-process bus) with
 * the test rail, in this process: the requests are sequential (one at a time, loopback), so this
 * process's client side is idle while the server works. Setup, not measured: one organization, its
 * sessions created through the API (an existing price, a client reference each, a customer email on
 * every other one, one in ten canceled through the API), the read store checked to hold them, and a
 * dashboard owner (made as `weir user create` makes one) signed in through the login form.
 *
 * Cases, interleaved request by request so the machine's load hits them alike, after `--warmup`
 * discarded iterations:
 *
 *   koa.      bare Koa, GET / answering the first page's HTML as a static string (baseline)
 *   first.    GET /dashboard/checkout-sessions
 *   filtered. GET /dashboard/checkout-sessions?status=open&paymentStatus=unpaid&from=…&to=…&q=<an email>
 *   deep.     GET /dashboard/checkout-sessions?page=<three quarters down the list>
 *
 * Server time is what the server's own middleware measured from the request's arrival to its body
 * set (Weir: the `ms` of its `http.request` log line, matched by request id; Koa: the same kind of
 * middleware); total is the client's, to the last byte of the body; CPU is this process's user and
 * system time over the request (client and server: the Koa row shows the client's and HTTP's
 * share), which other work on the machine inflates far less than times. `--profile` writes a CPU
 * profile of the measured iterations only (summarize it with bench/cpu-profile-top.ts).
 *
 * Prints a JSON summary and a Markdown table. Not a test: `npm test` never runs bench/.
 */
import { writeFile } from 'node:fs/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { Session } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import Koa from 'koa';
import { startWeir } from '../src/app/start-weir.ts';
import { createTestRail } from '../src/chain-ingest/test-rail.ts';
import { COLLECTIONS } from '../src/projections/collections.ts';
import { createUser } from '../src/tenancy/create-user.ts';
import { apiClient } from '../test/support/api-client.ts';
import { ADMIN_TOKEN, createMerchant, sessionRequest } from '../test/support/weir-harness.ts';
import { cliArgs } from './support/cli-args.ts';
import { report } from './support/report.ts';

type Settings = {
  sessions: number;
  iterations: number;
  warmup: number;
  concurrency: number;
  jsonOut: string | null;
  profileOut: string | null;
};

function readSettings(argv: string[]): Settings {
  const { value, integer } = cliArgs(argv);
  return {
    sessions: integer('--sessions', 10_000, 200_000),
    iterations: integer('--iterations', 200, 10_000),
    warmup: integer('--warmup', 20, 1_000),
    concurrency: integer('--concurrency', 8, 64),
    jsonOut: value('--json') ?? null,
    profileOut: value('--profile') ?? null,
  };
}

type Percentiles = { p50: number; p95: number; p99: number; max: number; mean: number };

const percentiles = (values: number[]): Percentiles => {
  const sorted = [...values].sort((a, b) => a - b);
  // Nearest rank: the smallest value with at least p% of the values at or below it.
  const rank = (p: number) => sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
  const round = (ms: number) => Math.round(ms * 100) / 100;
  return {
    p50: round(rank(50)),
    p95: round(rank(95)),
    p99: round(rank(99)),
    max: round(sorted.at(-1)!),
    mean: round(sorted.reduce((sum, v) => sum + v, 0) / sorted.length),
  };
};

/** A bare Koa app on a free loopback port answering `html` to every request, timing itself as Weir does. */
async function startKoaPage(
  html: string,
  timings: Map<string, number>,
): Promise<{ url: string; stop(): Promise<void> }> {
  const app = new Koa();
  app.use(async (ctx, next) => {
    const started = performance.now();
    await next();
    timings.set(ctx.get('x-request-id'), performance.now() - started);
  });
  app.use((ctx) => {
    ctx.type = 'html';
    ctx.body = html;
  });
  const server: Server = createServer(app.callback());
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Run `tasks` with at most `limit` at a time. */
async function inParallel(count: number, limit: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker));
}

const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

async function main(): Promise<void> {
  const settings = readSettings(process.argv.slice(2));
  const loadBefore = +loadavg()[0]!.toFixed(2);
  const dataDir = await mkdtemp(join(tmpdir(), 'weir-bench-dashboard-'));
  /** Server time per request id, from Weir's request log lines and the Koa app's middleware. */
  const serverMs = new Map<string, number>();
  const weir = await startWeir(
    { port: 0, host: '127.0.0.1', dataDir, adminToken: ADMIN_TOKEN, rateLimits: false, chainEnv: {} },
    {
      extraRails: [createTestRail()],
      log: (line) => {
        if (!line.includes('"http.request"')) return;
        const entry = JSON.parse(line) as { requestId?: string; ms?: number };
        if (entry.requestId?.startsWith('bench-') && typeof entry.ms === 'number')
          serverMs.set(entry.requestId, entry.ms);
      },
    },
  );
  let koa: Awaited<ReturnType<typeof startKoaPage>> | null = null;
  try {
    // Setup: an organization and its sessions, through the API.
    const setupStarted = performance.now();
    const merchant = await createMerchant(weir.url, 'Bench Dashboard Shop');
    const api = apiClient(weir.url, merchant.testSecretKey, { checkResponses: false });
    const first = await api.post<{ id: string; lineItems: { data: { price: { id: string } }[] } }>(
      '/api/v1/checkout/sessions',
      { ...sessionRequest(), clientReferenceId: 'order-0', customerData: { email: 'buyer-0@shop.example' } },
    );
    if (first.status !== 200) throw new Error(`session create failed: ${first.status} ${JSON.stringify(first.body)}`);
    const priceId = first.body.lineItems.data[0]!.price.id;
    const ids: string[] = [first.body.id];
    process.stderr.write(`[bench:dashboard] creating ${settings.sessions} sessions through the API ... `);
    await inParallel(settings.sessions - 1, settings.concurrency, async (n) => {
      const i = n + 1;
      const created = await api.post<{ id: string }>('/api/v1/checkout/sessions', {
        ...sessionRequest(),
        lineItems: { data: [{ priceId, quantity: 1 + (i % 3) }] },
        clientReferenceId: `order-${i}`,
        ...(i % 2 === 0 ? { customerData: { email: `buyer-${i}@shop.example` } } : {}),
      });
      if (created.status !== 200) throw new Error(`session ${i}: ${created.status} ${JSON.stringify(created.body)}`);
      ids[i] = created.body.id;
    });
    const toCancel = ids.filter((_, i) => i % 10 === 5);
    process.stderr.write(`canceling ${toCancel.length} ... `);
    await inParallel(toCancel.length, settings.concurrency, async (i) => {
      const canceled = await api.post(`/api/v1/checkout/sessions/${toCancel[i]}/cancel`);
      if (canceled.status !== 200) throw new Error(`cancel: ${canceled.status} ${JSON.stringify(canceled.body)}`);
    });
    const head = await weir.eventStore.headPosition();
    if (head !== null) await weir.projections.waitFor(head, 120_000);
    const tenant = { organizationId: merchant.organizationId, environment: 'test' };
    const sessionsCollection = weir.readStore.collection(COLLECTIONS.checkoutSessions);
    const stored = await sessionsCollection.count(tenant);
    const storedCanceled = await sessionsCollection.count({ ...tenant, status: 'canceled' });
    const setupS = +((performance.now() - setupStarted) / 1000).toFixed(1);
    process.stderr.write(`${stored} in the read store (${storedCanceled} canceled), ${setupS} s\n`);

    // A dashboard owner, signed in through the login form.
    const email = 'owner@bench.example';
    const password = 'bench password 0123';
    const user = await createUser(weir.commands, {
      organizationId: merchant.organizationId,
      email,
      role: 'owner',
      password,
      actor: 'cli',
    });
    if (user.position !== null) await weir.projections.waitFor(user.position);
    const login = await fetch(`${weir.url}/dashboard/login`);
    const formCookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await login.text())![1]!;
    const signIn = await fetch(`${weir.url}/dashboard/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: formCookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf, email, password }),
    });
    const sessionCookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0]!;
    if (signIn.status !== 303 || !sessionCookie.startsWith('weir_session='))
      throw new Error(`sign-in failed: ${signIn.status}`);

    const today = isoDay(Date.now());
    const searched = `buyer-${Math.floor(settings.sessions / 2) * 2 - 2}@shop.example`;
    const deepPage = Math.max(1, Math.floor((settings.sessions / 25) * 0.75));
    const list = '/dashboard/checkout-sessions';
    const query = new URLSearchParams({ status: 'open', paymentStatus: 'unpaid', from: today, to: today, q: searched });
    const weirCases = [
      { key: 'first', label: `Weir GET ${list} (page 1)`, path: list },
      {
        key: 'filtered',
        label: `Weir GET ${list}?status, paymentStatus, from, to, q (an email)`,
        path: `${list}?${query}`,
      },
      { key: 'deep', label: `Weir GET ${list}?page=${deepPage}`, path: `${list}?page=${deepPage}` },
    ];

    /** One request: its status, body size, total time, and the server time its id was logged with. */
    const get = async (base: string, path: string, requestId: string, cookie?: string) => {
      const cpuBefore = process.cpuUsage();
      const started = performance.now();
      const response = await fetch(`${base}${path}`, {
        headers: { 'x-request-id': requestId, ...(cookie ? { cookie } : {}) },
      });
      const body = await response.text();
      const totalMs = performance.now() - started;
      const cpu = process.cpuUsage(cpuBefore);
      return {
        status: response.status,
        body,
        totalMs,
        cpuMs: (cpu.user + cpu.system) / 1000,
        serverMs: serverMs.get(requestId),
      };
    };

    // Check each page once, outside the measurement: 200, the table, and the rows expected.
    const firstPage = await get(weir.url, list, 'bench-probe-first', sessionCookie);
    const filteredPage = await get(weir.url, `${list}?${query}`, 'bench-probe-filtered', sessionCookie);
    const deep = await get(weir.url, `${list}?page=${deepPage}`, 'bench-probe-deep', sessionCookie);
    const rows = (html: string) => (html.match(/aria-label="Session /g) ?? []).length;
    if (firstPage.status !== 200 || rows(firstPage.body) !== 25) throw new Error(`first page: ${firstPage.status}`);
    if (filteredPage.status !== 200 || rows(filteredPage.body) !== 1 || !filteredPage.body.includes(searched))
      throw new Error(`filtered page: ${filteredPage.status}, ${rows(filteredPage.body)} rows`);
    if (deep.status !== 200 || rows(deep.body) !== 25) throw new Error(`deep page: ${deep.status}`);
    if (firstPage.serverMs === undefined) throw new Error('no server time in the request log line');

    koa = await startKoaPage(firstPage.body, serverMs);
    const koaUrl = koa.url;
    const pageBytes = Buffer.byteLength(firstPage.body);
    const samples = new Map<string, { server: number[]; total: number[]; cpu: number[]; bytes: number }>();
    for (const key of ['koa', ...weirCases.map((c) => c.key)])
      samples.set(key, { server: [], total: [], cpu: [], bytes: 0 });

    let profiler: Session | null = null;
    process.stderr.write(
      `[bench:dashboard] ${settings.warmup} warm-up + ${settings.iterations} measured iterations of 4 requests ... `,
    );
    const measuredStarted = performance.now();
    for (let i = 0; i < settings.warmup + settings.iterations; i++) {
      const measured = i >= settings.warmup;
      if (measured && profiler === null && settings.profileOut) {
        profiler = new Session();
        profiler.connect();
        await profiler.post('Profiler.enable');
        await profiler.post('Profiler.start');
      }
      const record = (key: string, answer: Awaited<ReturnType<typeof get>>) => {
        if (answer.status !== 200) throw new Error(`${key}: ${answer.status}`);
        if (answer.serverMs === undefined) throw new Error(`${key}: no server time`);
        const sample = samples.get(key)!;
        sample.bytes = Buffer.byteLength(answer.body);
        if (!measured) return;
        sample.server.push(answer.serverMs);
        sample.total.push(answer.totalMs);
        sample.cpu.push(answer.cpuMs);
      };
      record('koa', await get(koaUrl, '/', `bench-koa-${i}`));
      for (const c of weirCases) record(c.key, await get(weir.url, c.path, `bench-${c.key}-${i}`, sessionCookie));
      serverMs.clear();
    }
    const measuredS = +((performance.now() - measuredStarted) / 1000).toFixed(1);
    process.stderr.write(`${measuredS} s\n`);
    if (profiler && settings.profileOut) {
      const { profile } = await profiler.post('Profiler.stop');
      await writeFile(settings.profileOut, JSON.stringify(profile));
      profiler.disconnect();
      process.stderr.write(`[bench:dashboard] CPU profile: ${settings.profileOut}\n`);
    }

    const memory = process.memoryUsage();
    const cases = [
      { key: 'koa', label: `bare Koa GET / (static page, ${pageBytes.toLocaleString('en-US')} bytes)` },
      ...weirCases,
    ].map((c) => {
      const sample = samples.get(c.key)!;
      return {
        key: c.key,
        name: c.label,
        bytes: sample.bytes,
        requests: sample.server.length,
        serverMs: percentiles(sample.server),
        totalMs: percentiles(sample.total),
        cpuMs: percentiles(sample.cpu),
      };
    });
    const koaCase = cases[0]!;
    const worstP95 = Math.max(...cases.slice(1).map((c) => c.serverMs.p95));
    const summary = {
      date: new Date().toISOString(),
      machine: {
        cpus: cpus().length,
        cpuModel: cpus()[0]?.model ?? 'unknown',
        memoryGiB: +(totalmem() / 2 ** 30).toFixed(1),
        node: process.version,
      },
      settings: { ...settings, pageSize: 25, deepPage, searched },
      sessionsInReadStore: stored,
      canceledInReadStore: storedCanceled,
      setupS,
      measuredS,
      cases,
      memoryMiB: { rss: Math.round(memory.rss / 2 ** 20), heapUsed: Math.round(memory.heapUsed / 2 ** 20) },
      /** 1-minute load average before and after (2 = both cores busy): other work on the machine skews results. */
      loadAverage: { before: loadBefore, after: +loadavg()[0]!.toFixed(2) },
      targets: { serverP95Ms: { worst: worstP95, target: 100, met: worstP95 < 100 } },
    };
    const ms = (p: Percentiles) => `${p.p50} / ${p.p95} / ${p.p99}`;
    const table = [
      '| Case | bytes | server ms p50 / p95 / p99 | total ms p50 / p95 / p99 | CPU ms p50 / p95 / p99 | total p95 vs Koa |',
      '|---|---:|---:|---:|---:|---:|',
      ...cases.map(
        (c) =>
          `| ${c.name} | ${c.bytes.toLocaleString('en-US')} | ${ms(c.serverMs)} | ${ms(c.totalMs)} | ${ms(c.cpuMs)} | ${c.key === 'koa' ? '1×' : `${(c.totalMs.p95 / koaCase.totalMs.p95).toFixed(1)}×`} |`,
      ),
    ].join('\n');
    await report(
      summary,
      table,
      [
        `Target sessions list p95 server time < 100 ms with ${stored} sessions: worst case ${worstP95} ms -> ${worstP95 < 100 ? 'met' : 'MISSED'}`,
      ],
      settings.jsonOut,
    );
  } finally {
    await koa?.stop();
    await weir.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
