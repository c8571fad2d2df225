/**
 * HTTP throughput of Weir's read and write API against a bare Koa hello-world, on this machine.
 *
 *   node --import tsx bench/http.ts [--duration 10] [--warmup 2] [--connections 50] [--rounds 3] [--json FILE] [--profile-weir DIR]
 *     [--skip-get] [--pile 50000 --slice 10000]
 *   (npm run bench:http)
 *
 * `--profile-weir DIR` runs the Weir child with `--cpu-prof --cpu-prof-dir=DIR` (summarize the
 * profile with bench/cpu-profile-top.ts).
 *
 * Each server runs in a child process of its own (`node --import tsx`), so the load generator
 * (autocannon, in this process) never shares an event loop with it. Loopback only; every run is
 * bounded in time. Cases, each a 2 s warm-up (discarded) then a 10 s measurement; (a) and (b)
 * alternate for 3 rounds (medians reported), so load from other work on the machine hits both:
 *
 *   a. bare Koa, GET /                                   (baseline)
 *   a2. bare Koa, GET / answering with Weir's session JSON (same payload as b, for context)
 *   b. Weir, GET /api/v1/checkout/sessions/{id}          (Bearer test key, rotating over 20 ids; target >= 50% of a)
 *   f. bare Koa, POST / inserting the body as one SQLite row (WAL, synchronous=FULL): the write floor
 *   c. Weir, POST /api/v1/checkout/sessions              (inline priceData, as the test harness sends; target >= 50% of f)
 *   d. Weir, POST /api/v1/checkout/sessions              (an existing priceId: one append per request; target >= 50% of f)
 *
 * (f), (c) and (d) alternate for `--rounds` rounds too, after the GET rounds (`--skip-get` leaves
 * those out). `--pile N` then creates N more sessions (inline priceData) in slices of `--slice`
 * requests and reports each slice's rate: the rate must stay flat as sessions pile up.
 *
 * Prints a JSON summary and a Markdown table. Not a test: `npm test` never runs bench/.
 */
import { cpus, loadavg, totalmem } from 'node:os';
import autocannon from 'autocannon';
import { apiClient } from '../test/support/api-client.ts';
import { ADMIN_TOKEN, createMerchant, sessionRequest } from '../test/support/weir-harness.ts';
import { cliArgs } from './support/cli-args.ts';
import { report } from './support/report.ts';
import { startTarget, type Target } from './support/target.ts';

type Settings = {
  durationS: number;
  warmupS: number;
  connections: number;
  pipelining: number;
  sessionIds: number;
  rounds: number;
  jsonOut: string | null;
  profileDir: string | null;
  skipGet: boolean;
  pile: number | null;
  slice: number;
};

function readSettings(argv: string[]): Settings {
  const { value, integer: positive, flag } = cliArgs(argv);
  return {
    durationS: positive('--duration', 10, 120),
    warmupS: positive('--warmup', 2, 30),
    connections: positive('--connections', 50, 1000),
    pipelining: 1,
    sessionIds: positive('--ids', 20, 1000),
    rounds: positive('--rounds', 3, 10),
    jsonOut: value('--json') ?? null,
    profileDir: value('--profile-weir') ?? null,
    skipGet: flag('--skip-get'),
    pile: value('--pile') === undefined ? null : positive('--pile', 50_000, 1_000_000),
    slice: positive('--slice', 10_000, 1_000_000),
  };
}

type CaseResult = {
  name: string;
  method: string;
  path: string;
  requestsPerSecond: number;
  requestsTotal: number;
  durationS: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
  /** The server's CPU time (user + system) per completed request over the measured window, when taken. */
  cpuMsPerRequest: number | null;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
};

/** A case measured for `--duration` after a warm-up, or (with `amount`) for exactly that many requests, no warm-up. */
async function measure(
  name: string,
  options: autocannon.Options,
  settings: Settings,
  amount?: number,
  /** The server measured, to take its CPU time per request over the measured window. */
  server?: Target,
): Promise<CaseResult> {
  const base: autocannon.Options = {
    connections: settings.connections,
    pipelining: settings.pipelining,
    timeout: 10,
    ...options,
  };
  let result: autocannon.Result;
  if (amount === undefined) {
    process.stderr.write(`[bench:http] ${name}: warm-up ${settings.warmupS} s ... `);
    await autocannon({ ...base, duration: settings.warmupS });
    process.stderr.write(`measuring ${settings.durationS} s ... `);
  } else {
    process.stderr.write(`[bench:http] ${name}: ${amount} requests ... `);
  }
  const cpuBefore = server ? (await server.stats()).cpuMicros : 0;
  const started = performance.now();
  result = await autocannon(amount === undefined ? { ...base, duration: settings.durationS } : { ...base, amount });
  const elapsedS = (performance.now() - started) / 1000;
  const cpuMicros = server ? (await server.stats()).cpuMicros - cpuBefore : null;
  const statusCodes: Record<string, number> = {};
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = stat.count ?? 0;
  const first = options.requests?.[0];
  const caseResult: CaseResult = {
    name,
    method: first?.method ?? options.method ?? 'GET',
    path: first?.path ?? new URL(options.url).pathname,
    // Completed responses per second over the whole measured window (autocannon's per-second mean;
    // for a fixed amount, the total over the time it took, measured here; autocannon ends such a run
    // at its next one-second tick, so a slice's rate is low by up to a second of its length).
    requestsPerSecond: Math.round(amount === undefined ? result.requests.average : result.requests.total / elapsedS),
    requestsTotal: result.requests.total,
    durationS: result.duration,
    latencyMs: {
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
      mean: +result.latency.mean.toFixed(2),
    },
    cpuMsPerRequest: cpuMicros === null ? null : +(cpuMicros / 1000 / Math.max(1, result.requests.total)).toFixed(3),
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
  };
  process.stderr.write(
    `${caseResult.requestsPerSecond} req/s, p50 ${caseResult.latencyMs.p50} ms, p99 ${caseResult.latencyMs.p99} ms, non-2xx ${caseResult.non2xx}${caseResult.cpuMsPerRequest === null ? '' : `, server CPU ${caseResult.cpuMsPerRequest} ms/request`}\n`,
  );
  return caseResult;
}

const mib = (bytes: number) => Math.round(bytes / (1024 * 1024));

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/** The round with the median requests/s stands for the case (its latencies come with it). */
function medianCase(name: string, rounds: CaseResult[]): CaseResult {
  const sorted = [...rounds].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond);
  const chosen = sorted[Math.floor((sorted.length - 1) / 2)]!;
  return {
    ...chosen,
    name: `${name} (median of ${rounds.length} rounds)`,
    requestsTotal: rounds.reduce((sum, c) => sum + c.requestsTotal, 0),
    non2xx: rounds.reduce((sum, c) => sum + c.non2xx, 0),
    errors: rounds.reduce((sum, c) => sum + c.errors, 0),
    timeouts: rounds.reduce((sum, c) => sum + c.timeouts, 0),
  };
}

async function main(): Promise<void> {
  const settings = readSettings(process.argv.slice(2));
  const cases: CaseResult[] = [];
  const loadBefore = +loadavg()[0]!.toFixed(2);

  // Both servers run side by side (an idle one costs nothing); (a) and (b) alternate for
  // `--rounds` rounds, so a change in the machine's load hits both alike. Each case reports the
  // median round; the ratio is the median of the per-round ratios. The same for (f), (c) and (d).
  const profileArgs = settings.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${settings.profileDir}`] : [];
  const koa = await startTarget('targets/koa-hello.ts');
  const floor = await startTarget('targets/koa-sqlite-insert.ts');
  const weir = await startTarget('targets/weir-server.ts', { WEIR_ADMIN_TOKEN: ADMIN_TOKEN }, profileArgs);
  let weirMemory: { afterSetupMiB: number; afterGetMiB: number; afterPostMiB: number; maxRssMiB: number } | null = null;
  let sessionsInLog = 0;
  const koaRounds: CaseResult[] = [];
  const koaJsonRounds: CaseResult[] = [];
  const getRounds: CaseResult[] = [];
  const floorRounds: CaseResult[] = [];
  const inlineRounds: CaseResult[] = [];
  const priceIdRounds: CaseResult[] = [];
  const pileSlices: CaseResult[] = [];
  let koaJson: Target | null = null;
  let probeBytes = 0;
  try {
    const merchant = await createMerchant(weir.url, 'Bench Shop');
    const auth = { authorization: `Bearer ${merchant.testSecretKey}` };
    const ids: string[] = [];
    let priceId = '';
    for (let i = 0; i < settings.sessionIds; i++) {
      const created = await merchant.api.post<{ id: string; lineItems: { data: { price: { id: string } }[] } }>(
        '/api/v1/checkout/sessions',
        {
          ...sessionRequest(String(100_000_000 + i * 1_000_000), 1 + (i % 3)),
          clientReferenceId: `order-${i}`,
          metadata: { orderId: `o-${i}` },
        },
      );
      if (created.status !== 200)
        throw new Error(`session create failed: ${created.status} ${JSON.stringify(created.body)}`);
      ids.push(created.body.id);
      priceId = created.body.lineItems.data[0]!.price.id;
    }
    // Check once, outside the measurement, that the GET answers 200 with the session.
    const probe = await apiClient(weir.url, merchant.testSecretKey).get<{ id: string }>(
      `/api/v1/checkout/sessions/${ids[0]}`,
    );
    if (probe.status !== 200 || probe.body.id !== ids[0])
      throw new Error(`GET probe failed: ${probe.status} ${JSON.stringify(probe.body)}`);
    const afterSetup = await weir.stats();
    probeBytes = Buffer.byteLength(JSON.stringify(probe.body));
    // A Koa app answering with the very same JSON document: what the payload alone costs.
    koaJson = await startTarget('targets/koa-hello.ts', { BENCH_JSON_BODY: JSON.stringify(probe.body) });

    for (let round = 1; round <= settings.rounds && !settings.skipGet; round++) {
      koaRounds.push(await measure(`a. Koa hello-world GET / [round ${round}]`, { url: `${koa.url}/` }, settings));
      koaJsonRounds.push(
        await measure(
          `a2. Koa GET / answering Weir's session JSON [round ${round}]`,
          { url: `${koaJson.url}/` },
          settings,
        ),
      );
      getRounds.push(
        await measure(
          `b. Weir GET /api/v1/checkout/sessions/{id} (${ids.length} ids) [round ${round}]`,
          {
            url: weir.url,
            requests: ids.map((id) => ({
              method: 'GET' as const,
              path: `/api/v1/checkout/sessions/${id}`,
              headers: auth,
            })),
          },
          settings,
        ),
      );
    }
    await koa.stop();
    await koaJson.stop();
    if (!settings.skipGet) {
      cases.push(medianCase('a. Koa hello-world GET /', koaRounds));
      cases.push(medianCase(`a2. Koa GET / answering the same session JSON (${probeBytes} bytes)`, koaJsonRounds));
      cases.push(medianCase(`b. Weir GET /api/v1/checkout/sessions/{id} (${ids.length} ids)`, getRounds));
    }
    const afterGet = await weir.stats();

    const postHeaders = { ...auth, 'content-type': 'application/json' };
    const inlineBody = JSON.stringify({
      ...sessionRequest(),
      clientReferenceId: 'bench-order',
      metadata: { orderId: 'bench' },
    });
    const inlineOptions: autocannon.Options = {
      url: `${weir.url}/api/v1/checkout/sessions`,
      method: 'POST',
      headers: postHeaders,
      body: inlineBody,
    };
    for (let round = 1; round <= settings.rounds; round++) {
      floorRounds.push(
        await measure(
          `f. Koa POST / inserting one SQLite row (synchronous=FULL) [round ${round}]`,
          { url: `${floor.url}/`, method: 'POST', headers: { 'content-type': 'application/json' }, body: inlineBody },
          settings,
          undefined,
          floor,
        ),
      );
      inlineRounds.push(
        await measure(
          `c. Weir POST /api/v1/checkout/sessions (inline priceData) [round ${round}]`,
          inlineOptions,
          settings,
          undefined,
          weir,
        ),
      );
      priceIdRounds.push(
        await measure(
          `d. Weir POST /api/v1/checkout/sessions (existing priceId) [round ${round}]`,
          {
            url: `${weir.url}/api/v1/checkout/sessions`,
            method: 'POST',
            headers: postHeaders,
            body: JSON.stringify({
              ...sessionRequest(),
              lineItems: { data: [{ priceId, quantity: 2 }] },
              clientReferenceId: 'bench-order',
            }),
          },
          settings,
          undefined,
          weir,
        ),
      );
    }
    await floor.stop();
    cases.push(medianCase('f. Koa POST / inserting one SQLite row (synchronous=FULL)', floorRounds));
    cases.push(medianCase('c. Weir POST /api/v1/checkout/sessions (inline priceData)', inlineRounds));
    cases.push(medianCase('d. Weir POST /api/v1/checkout/sessions (existing priceId)', priceIdRounds));
    for (let made = 0, slice = 1; settings.pile !== null && made < settings.pile; slice++) {
      const amount = Math.min(settings.slice, settings.pile - made);
      pileSlices.push(
        await measure(
          `e. pile: sessions ${made + 1}-${made + amount} of ${settings.pile} [slice ${slice}]`,
          inlineOptions,
          settings,
          amount,
          weir,
        ),
      );
      made += amount;
    }
    const afterPost = await weir.stats();
    const listed = await apiClient(weir.url, merchant.testSecretKey).get<{ count: number }>(
      '/api/v1/checkout/sessions?limit=1',
    );
    sessionsInLog = listed.body.count;
    weirMemory = {
      afterSetupMiB: mib(afterSetup.rssBytes),
      afterGetMiB: mib(afterGet.rssBytes),
      afterPostMiB: mib(afterPost.rssBytes),
      maxRssMiB: mib(afterPost.maxRssBytes),
    };
  } finally {
    await koa.stop();
    await koaJson?.stop();
    await floor.stop();
    await weir.stop();
  }

  const byName = (prefix: string) => cases.find((c) => c.name.startsWith(prefix));
  const ratiosTo = (rounds: CaseResult[], base: CaseResult[]) =>
    rounds.map((c, i) => +(c.requestsPerSecond / base[i]!.requestsPerSecond).toFixed(3));
  const roundRatios = ratiosTo(getRounds, koaRounds);
  const getRatio = settings.skipGet ? null : median(roundRatios);
  const samePayloadRatios = ratiosTo(getRounds, koaJsonRounds);
  const samePayloadRatio = settings.skipGet ? null : median(samePayloadRatios);
  const inlineRatios = ratiosTo(inlineRounds, floorRounds);
  const priceIdRatios = ratiosTo(priceIdRounds, floorRounds);
  const inlineRatio = median(inlineRatios);
  const priceIdRatio = median(priceIdRatios);
  const postInline = byName('c.')!;
  const postPriceId = byName('d.')!;
  const postNon2xx = postInline.non2xx + postPriceId.non2xx + pileSlices.reduce((sum, c) => sum + c.non2xx, 0);
  const summary = {
    date: new Date().toISOString(),
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? 'unknown',
      memoryGiB: +(totalmem() / 2 ** 30).toFixed(1),
      node: process.version,
    },
    settings: {
      durationS: settings.durationS,
      warmupS: settings.warmupS,
      connections: settings.connections,
      pipelining: settings.pipelining,
      getIds: settings.sessionIds,
      rounds: settings.rounds,
      pile: settings.pile,
      slice: settings.slice,
    },
    cases,
    rounds: {
      koa: koaRounds.map((c) => c.requestsPerSecond),
      koaSameJson: koaJsonRounds.map((c) => c.requestsPerSecond),
      weirGet: getRounds.map((c) => c.requestsPerSecond),
      ratios: roundRatios,
      ratiosToSameJson: samePayloadRatios,
      writeFloor: floorRounds.map((c) => c.requestsPerSecond),
      postInline: inlineRounds.map((c) => c.requestsPerSecond),
      postPriceId: priceIdRounds.map((c) => c.requestsPerSecond),
      postInlineVsFloor: inlineRatios,
      postPriceIdVsFloor: priceIdRatios,
    },
    pile: pileSlices.map((c) => ({
      requests: c.requestsTotal,
      requestsPerSecond: c.requestsPerSecond,
      cpuMsPerRequest: c.cpuMsPerRequest,
      non2xx: c.non2xx,
    })),
    weirMemory,
    sessionsInLog,
    /** 1-minute load average before and after (2 = both cores busy): other work on the machine skews results. */
    loadAverage: { before: loadBefore, after: +loadavg()[0]!.toFixed(2) },
    targets: {
      getVsKoa: getRatio === null ? null : { ratio: +getRatio.toFixed(3), target: 0.5, met: getRatio >= 0.5 },
      getVsKoaSameJson: samePayloadRatio === null ? null : { ratio: +samePayloadRatio.toFixed(3), target: null },
      postInlineVsFloor: { ratio: +inlineRatio.toFixed(3), target: 0.5, met: inlineRatio >= 0.5 },
      postPriceIdVsFloor: { ratio: +priceIdRatio.toFixed(3), target: 0.5, met: priceIdRatio >= 0.5 },
      postNon2xx: {
        inline: postInline.non2xx,
        priceId: postPriceId.non2xx,
        total: postNon2xx,
        target: 0,
        met: postNon2xx === 0,
        /** Requests that got no answer within autocannon's 10 s timeout are not responses at all: reported apart. */
        timeouts: postInline.timeouts + postPriceId.timeouts + pileSlices.reduce((sum, c) => sum + c.timeouts, 0),
      },
    },
  };
  const percent = (ratio: number) => `${(ratio * 100).toFixed(1)}%`;
  const row = (c: CaseResult | undefined, ratio: string) =>
    c
      ? `| ${c.name} | ${c.requestsPerSecond.toLocaleString('en-US')} | ${c.latencyMs.p50} | ${c.latencyMs.p99} | ${c.cpuMsPerRequest ?? ''} | ${c.requestsTotal.toLocaleString('en-US')} | ${c.non2xx} | ${c.timeouts}/${c.errors} | ${ratio} |`
      : null;
  const koaCase = byName('a.');
  const koaJsonCase = byName('a2.');
  const of = (c: CaseResult | undefined, base: CaseResult | undefined) =>
    c && base ? percent(c.requestsPerSecond / base.requestsPerSecond) : '';
  const table = [
    `| Case | req/s | p50 ms | p99 ms | server CPU ms/request | requests | non-2xx | timeouts/errors | vs |`,
    `|---|---:|---:|---:|---:|---:|---:|---:|---:|`,
    row(koaCase, '100% (a)'),
    row(koaJsonCase, `${of(koaJsonCase, koaCase)} of a`),
    row(byName('b.'), getRatio === null ? '' : `${percent(getRatio)} of a (${percent(samePayloadRatio!)} of a2)`),
    row(byName('f.'), '100% (f)'),
    row(postInline, `${percent(inlineRatio)} of f`),
    row(postPriceId, `${percent(priceIdRatio)} of f`),
    ...pileSlices.map((c) => row(c, `${of(c, pileSlices[0])} of slice 1`)),
  ]
    .filter((line) => line !== null)
    .join('\n');
  await report(
    summary,
    table,
    [
      getRatio === null
        ? 'Target GET >= 50% of bare Koa: not measured (--skip-get)'
        : `Target GET >= 50% of bare Koa: ${percent(getRatio)} -> ${getRatio >= 0.5 ? 'met' : 'MISSED'}`,
      `Target POST (inline priceData) >= 50% of the write floor: ${percent(inlineRatio)} (rounds ${inlineRatios.join(', ')}) -> ${inlineRatio >= 0.5 ? 'met' : 'MISSED'}`,
      `Target POST (priceId) >= 50% of the write floor: ${percent(priceIdRatio)} (rounds ${priceIdRatios.join(', ')}) -> ${priceIdRatio >= 0.5 ? 'met' : 'MISSED'}`,
      `Target POST non-2xx = 0: ${postNon2xx} -> ${postNon2xx === 0 ? 'met' : 'MISSED'} (timeouts: ${summary.targets.postNon2xx.timeouts})`,
    ],
    settings.jsonOut,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
