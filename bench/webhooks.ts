/**
 * Webhook deliveries in a burst, against a bare sender, on this machine.
 *
 *   node --import tsx bench/webhooks.ts [--events 2000] [--endpoints 5] [--rounds 1] [--json FILE] [--profile FILE]
 *   (npm run bench:webhooks)
 *
 * `--profile FILE` writes a V8 CPU profile of Weir's burst alone, from the cancels to the last
 * arrival (summarize it with bench/cpu-profile-top.ts).
 *
 * One receiver (bench/targets/webhook-sink.ts) runs in a child process and answers every POST 200
 * at once; each endpoint is a path of it. Per round, both cases deliver events x endpoints bodies:
 *
 *   a. bare sender (baseline): this process signs each body for its endpoint (both of Weir's
 *      signatures) and POSTs it with node:http, keep-alive, 64 requests in flight. Nothing recorded.
 *   b. Weir (startWeir in this process, fresh data dir, embedded stores): `events` checkout sessions
 *      are created over the API, then `endpoints` endpoints subscribed to checkout_session.canceled,
 *      then every session is canceled at once (the burst: the commands issued together). Each
 *      cancel is one public event for each endpoint.
 *
 * Rate: deliveries / (last arrival - first event's time). Delay of a delivery: its arrival - its
 * event's `created`. Targets: Weir's rate >= 50% of the bare sender's in the same round, p99 delay
 * under 5 s, every (endpoint, event) received exactly once. Loopback only; every wait is bounded.
 * Not a test: `npm test` never runs bench/.
 */
import { fork } from 'node:child_process';

import { Session } from 'node:inspector/promises';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkoutSessionAggregate } from '../machines/checkout-session.aggregate.ts';
import { startWeir, type Weir } from '../src/app/start-weir.ts';
import { createTestRail } from '../src/chain-ingest/test-rail.ts';
import { pino } from 'pino';
import { createLogger } from '../src/shared/logger.ts';
import { createSqliteEventStore } from '../src/event-store/sqlite-event-store.ts';
import { newId } from '../src/shared/ids.ts';
import { bodySignature, timestampedSignature } from '../src/webhooks/signature.ts';
import { ADMIN_TOKEN, createMerchant, sessionRequest } from '../test/support/weir-harness.ts';
import { loadAverage1m, machineInfo, percentile } from './evm/support/bench-env.ts';
import { cliArgs } from './support/cli-args.ts';
import { report } from './support/report.ts';
import type { Arrival, SinkCommand, SinkMessage } from './targets/webhook-sink.ts';

type Settings = {
  events: number;
  endpoints: number;
  rounds: number;
  jsonOut: string | null;
  profileOut: string | null;
};

type CaseResult = {
  deliveries: number;
  received: number;
  missing: number;
  duplicates: number;
  seconds: number;
  perSecond: number;
  /** Deliveries per second from the first arrival to the last: the sending alone, without making the events. */
  sendingPerSecond: number;
  delayMs: { p50: number; p90: number; p99: number; max: number };
};

const MAX_WAIT_MS = 10 * 60_000;

function readSettings(argv: string[]): Settings {
  const { value, integer } = cliArgs(argv);
  return {
    events: integer('--events', 2000, 100_000),
    endpoints: integer('--endpoints', 5, 100),
    rounds: integer('--rounds', 1, 10),
    jsonOut: value('--json') ?? null,
    profileOut: value('--profile') ?? null,
  };
}

async function startSink() {
  const child = fork(fileURLToPath(new URL('./targets/webhook-sink.ts', import.meta.url)), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const next = <T extends SinkMessage['type']>(type: T) =>
    new Promise<Extract<SinkMessage, { type: T }>>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`webhook sink: no ${type} within 60 s`)), 60_000);
      const onMessage = (message: SinkMessage) => {
        if (message.type !== type) return;
        clearTimeout(timer);
        child.off('message', onMessage);
        resolve(message as Extract<SinkMessage, { type: T }>);
      };
      child.on('message', onMessage);
    });
  const send = (command: SinkCommand) => child.send(command);
  const { url } = await next('ready');
  return {
    url,
    reset: () => send({ type: 'reset' }),
    async arrivals(): Promise<Arrival[]> {
      const reply = next('report');
      send({ type: 'report' });
      return (await reply).arrivals;
    },
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      send({ type: 'stop' });
      await exited;
    },
  };
}
type Sink = Awaited<ReturnType<typeof startSink>>;

const distinct = (arrivals: Arrival[]) => new Set(arrivals.map(([path, eventId]) => `${path} ${eventId}`)).size;

/** Polls the sink until `count` distinct deliveries arrived, bounded. */
async function waitForArrivals(sink: Sink, count: number, what: string): Promise<Arrival[]> {
  const deadline = Date.now() + MAX_WAIT_MS;
  for (;;) {
    const arrivals = await sink.arrivals();
    if (distinct(arrivals) >= count) return arrivals;
    if (Date.now() > deadline)
      throw new Error(`${what}: ${distinct(arrivals)} of ${count} arrived within ${MAX_WAIT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function summarize(arrivals: Arrival[], expected: number, startedAt: number): CaseResult {
  const seen = new Map<string, number>();
  for (const [path, eventId] of arrivals) seen.set(`${path} ${eventId}`, (seen.get(`${path} ${eventId}`) ?? 0) + 1);
  const delays = arrivals.map(([, , created, at]) => at - created).sort((a, b) => a - b);
  const last = Math.max(...arrivals.map(([, , , at]) => at));
  const first = Math.min(...arrivals.map(([, , , at]) => at));
  const seconds = (last - startedAt) / 1000;
  return {
    deliveries: expected,
    received: arrivals.length,
    missing: expected - seen.size,
    duplicates: arrivals.length - seen.size,
    seconds: +seconds.toFixed(2),
    perSecond: Math.round(seen.size / seconds),
    sendingPerSecond: Math.round(seen.size / Math.max((last - first) / 1000, 0.001)),
    delayMs: {
      p50: percentile(delays, 50),
      p90: percentile(delays, 90),
      p99: percentile(delays, 99),
      max: delays[delays.length - 1] ?? 0,
    },
  };
}

/**
 * (a) Sign and POST every body, 64 in flight, keep-alive: what Node does with no gateway in between.
 * With `record`, each answer is then recorded as one event in a SQLite log of its own (a stream per
 * delivery, appends of one turn in one transaction, as Weir's store does): the floor of a gateway
 * that keeps every outcome durably.
 */
async function bareSender(
  sink: Sink,
  settings: Settings,
  sessionJson: string,
  record?: (statusCode: number) => Promise<void>,
): Promise<CaseResult> {
  const secret = `whsec_${'0'.repeat(48)}`;
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const startedAt = Date.now();
  const jobs: { path: string; eventId: string; body: string }[] = [];
  for (let e = 0; e < settings.events; e++) {
    const eventId = newId();
    const body = `{"id":"${eventId}","apiVersion":"2026-11-01","created":${startedAt},"livemode":false,"object":"checkoutSession","type":"checkout_session.canceled","data":{"object":${sessionJson}}}`;
    for (let n = 1; n <= settings.endpoints; n++) jobs.push({ path: `/e${n}`, eventId, body });
  }
  const target = new URL(sink.url);
  const post = (job: (typeof jobs)[number]) =>
    new Promise<number>((resolve, reject) => {
      const req = request(
        {
          agent,
          host: target.hostname,
          port: target.port,
          path: job.path,
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(job.body),
            'x-webhook-signature': bodySignature(secret, job.body),
            'x-webhook-token': secret,
            'x-weir-signature': timestampedSignature(secret, job.body, Math.floor(Date.now() / 1000)),
            'x-webhook-id': job.eventId,
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end(job.body);
    });
  let index = 0;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (index < jobs.length) {
        const job = jobs[index++]!;
        const status = await post(job);
        await record?.(status);
      }
    }),
  );
  agent.destroy();
  return summarize(await waitForArrivals(sink, jobs.length, 'bare sender'), jobs.length, startedAt);
}

/** (a2) The bare sender, each outcome appended to a SQLite event store of its own. */
async function durableFloor(sink: Sink, settings: Settings, sessionJson: string): Promise<CaseResult> {
  const dir = await mkdtemp(join(tmpdir(), 'weir-bench-webhooks-floor-'));
  const log = createSqliteEventStore({ path: join(dir, 'events.sqlite3') });
  const metadata = { organizationId: 'bench', environment: 'test' as const, actor: 'bench', correlationId: 'bench' };
  try {
    return await bareSender(sink, settings, sessionJson, async (statusCode) => {
      const at = new Date().toISOString();
      await log.append(
        `webhook_delivery-${newId()}`,
        [
          {
            id: newId(),
            type: 'WebhookDeliverySucceeded',
            data: { attempt: 1, at, statusCode, error: null },
            metadata: { ...metadata, occurredAt: at },
          },
        ],
        'no_stream',
      );
    });
  } finally {
    await log.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** A CPU profile of this process from now until `stopInto`. */
async function startProfiling() {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return {
    async stopInto(file: string) {
      const { profile } = await session.post('Profiler.stop');
      await writeFile(file, JSON.stringify(profile));
      session.disconnect();
    },
  };
}

/** (b) The burst through Weir. */
async function weirBurst(sink: Sink, settings: Settings): Promise<CaseResult & { sessionJson: string }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'weir-bench-webhooks-'));
  let weir: Weir | null = null;
  try {
    weir = await startWeir(
      { port: 0, host: '127.0.0.1', dataDir, adminToken: ADMIN_TOKEN, chainEnv: {} },
      // Every line Weir logs at info (requests, events, attempts), written to /dev/null: its cost counts.
      {
        logger: createLogger({ destination: pino.destination({ dest: '/dev/null', sync: true }) }),
        extraRails: [createTestRail()],
      },
    );
    const merchant = await createMerchant(weir.url, 'Webhook Bench Shop');
    const ids: string[] = [];
    let sessionJson = '';
    let created = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (created < settings.events) {
          created += 1;
          const session = await merchant.api.post<{ id: string }>('/api/v1/checkout/sessions', sessionRequest());
          if (session.status !== 200)
            throw new Error(`session create: ${session.status} ${JSON.stringify(session.body)}`);
          ids.push(session.body.id);
          sessionJson ||= JSON.stringify(session.body);
        }
      }),
    );
    for (let n = 1; n <= settings.endpoints; n++) {
      const endpoint = await merchant.api.post('/api/v1/webhook-endpoints', {
        url: `${sink.url}/e${n}`,
        description: `bench ${n}`,
        enabledEvents: { events: ['checkout_session.canceled'] },
      });
      if (endpoint.status !== 200)
        throw new Error(`endpoint create: ${endpoint.status} ${JSON.stringify(endpoint.body)}`);
    }
    sink.reset();
    const { commands } = weir;
    const tenant = { organizationId: merchant.organizationId, environment: 'test' as const, actor: 'bench' };
    const profiling = settings.profileOut ? await startProfiling() : null;
    const startedAt = Date.now();
    process.stderr.write(`[bench:webhooks] Weir: canceling ${ids.length} sessions at once ... `);
    await Promise.all(
      ids.map((id) =>
        commands.handle(checkoutSessionAggregate, id, { type: 'CancelCheckoutSession', reason: 'bench' }, tenant),
      ),
    );
    process.stderr.write(`appended in ${Date.now() - startedAt} ms; waiting for the deliveries\n`);
    const expected = ids.length * settings.endpoints;
    const arrivals = await waitForArrivals(sink, expected, 'Weir');
    if (profiling) await profiling.stopInto(settings.profileOut!);
    return { ...summarize(arrivals, expected, startedAt), sessionJson };
  } finally {
    await weir?.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

const row = (name: string, c: CaseResult, ratio: string) =>
  `| ${name} | ${c.deliveries.toLocaleString('en-US')} | ${c.perSecond.toLocaleString('en-US')} | ${c.sendingPerSecond.toLocaleString('en-US')} | ${c.seconds} | ${c.delayMs.p50} | ${c.delayMs.p99} | ${c.delayMs.max} | ${c.missing} | ${c.duplicates} | ${ratio} |`;

async function main(): Promise<void> {
  const settings = readSettings(process.argv.slice(2));
  const loadBefore = loadAverage1m();
  const sink = await startSink();
  const rounds: { bare: CaseResult; floor: CaseResult; weir: CaseResult; ratio: number }[] = [];
  try {
    for (let round = 1; round <= settings.rounds; round++) {
      // Weir first: its first session's JSON is the payload the bare sender sends too.
      const weir = await weirBurst(sink, settings);
      process.stderr.write(
        `[bench:webhooks] round ${round} Weir: ${weir.perSecond}/s, p99 delay ${weir.delayMs.p99} ms, missing ${weir.missing}, duplicates ${weir.duplicates}\n`,
      );
      sink.reset();
      const bare = await bareSender(sink, settings, weir.sessionJson);
      process.stderr.write(`[bench:webhooks] round ${round} bare sender: ${bare.perSecond}/s\n`);
      sink.reset();
      const floor = await durableFloor(sink, settings, weir.sessionJson);
      process.stderr.write(
        `[bench:webhooks] round ${round} bare sender recording each outcome: ${floor.perSecond}/s\n`,
      );
      sink.reset();
      const { sessionJson: _payload, ...weirResult } = weir;
      rounds.push({ bare, floor, weir: weirResult, ratio: +(weir.perSecond / bare.perSecond).toFixed(3) });
    }
  } finally {
    await sink.stop();
  }
  const median = [...rounds].sort((a, b) => a.ratio - b.ratio)[Math.floor((rounds.length - 1) / 2)]!;
  const summary = {
    date: new Date().toISOString(),
    machine: machineInfo(),
    settings: { events: settings.events, endpoints: settings.endpoints, rounds: settings.rounds },
    rounds,
    loadAverage: { before: loadBefore, after: loadAverage1m() },
    targets: {
      rateVsBare: { ratio: median.ratio, target: 0.5, met: median.ratio >= 0.5 },
      p99DelayMs: { value: median.weir.delayMs.p99, target: 5000, met: median.weir.delayMs.p99 < 5000 },
      exactlyOnce: rounds.every((r) => r.weir.missing === 0 && r.weir.duplicates === 0),
    },
  };
  const table = [
    '| Case | deliveries | per s | per s, first to last arrival | s | p50 delay ms | p99 delay ms | max delay ms | missing | doubled | vs (a) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rounds.flatMap((r, i) => [
      row(`a. bare sender [round ${i + 1}]`, r.bare, '100%'),
      row(
        `a2. bare sender, each outcome appended to a SQLite log [round ${i + 1}]`,
        r.floor,
        `${((r.floor.perSecond / r.bare.perSecond) * 100).toFixed(1)}%`,
      ),
      row(
        `b. Weir, burst of ${settings.events} events x ${settings.endpoints} endpoints [round ${i + 1}]`,
        r.weir,
        `${(r.ratio * 100).toFixed(1)}%`,
      ),
    ]),
  ].join('\n');
  await report(
    summary,
    table,
    [
      `Target rate >= 50% of the bare sender: ${(median.ratio * 100).toFixed(1)}% -> ${summary.targets.rateVsBare.met ? 'met' : 'MISSED'}`,
      `Target p99 delay < 5 s: ${median.weir.delayMs.p99} ms -> ${summary.targets.p99DelayMs.met ? 'met' : 'MISSED'}`,
      `Target nothing lost or doubled: ${summary.targets.exactlyOnce ? 'met' : 'MISSED'}`,
    ],
    settings.jsonOut,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
