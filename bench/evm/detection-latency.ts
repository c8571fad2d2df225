/**
 * Detection latency on the EVM devnet: from the moment a payer's `eth_sendRawTransaction` returns
 * (hardhat automines, so the block that makes the payment final exists then; the devnet's
 * confirmation depth is 1) to the arrival of the `checkout_session.completed` webhook at a local
 * receiver.
 *
 *   node --import tsx bench/evm/detection-latency.ts [--payments 200] [--warmup 5] [--poll-ms 20] [--gap-ms 50]
 *        [--events all|completed] [--reveal] [--no-probes] [--json FILE] [--timeout-s 600]
 *   (npm run bench:detection)
 *
 * One process: a hardhat devnet (child process), Weir with its embedded default stores (SQLite
 * event store, embedded read store, in-process bus) via `startWeir`, and a webhook receiver on
 * 127.0.0.1. An organization (admin API) gets the devnet merchant account as its withdrawal
 * address and a webhook endpoint (all events, or only checkout_session.completed). All sessions
 * (1 USDC each) are created first and the system is left to go quiet; `--warmup` payments (not
 * counted) warm the JIT, the connections and the follower's socket; then each is paid in turn
 * with a pre-signed USDC transfer to its own deposit address, and the next payment starts
 * `--gap-ms` after the previous completion webhook arrived.
 *
 * Sweeps are held back (`sweepBatchDelayMs` = 1 h) so that no sweep transaction competes with the
 * payments. The follower polls every `--poll-ms` without a WebSocket; with the devnet's WebSocket
 * live (checked from the follower's log line `new heads from websocket`) heads arrive by
 * `eth_subscribe("newHeads")`.
 *
 * Probes (unless --no-probes), all in this process and without changes to src/: the bench's own
 * newHeads subscription (when hardhat announced the block), a bus consumer on `chain.>` (when the
 * follower published the transfer and the final), `eventStore.onAppended` + `readAll` (when the
 * matcher's commands appended PaymentDetected and CheckoutSessionCompleted),
 * `projections.onAdvanced` (when the read models passed CheckoutSessionCompleted) and a wrapper
 * around the HTTP webhook sender (when the dispatcher started the POST). Prints a JSON summary
 * and a Markdown table. Not a test.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeFunctionData, erc20Abi, getAddress, keccak256, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { getWebSocketRpcClient } from 'viem/utils';
import { startWeir, type Weir } from '../../src/app/start-weir.ts';
import { writeDevnetInfo, devnetAccount } from '../../src/chain-ingest/evm/devnet/devnet-info.ts';
import { startDevnet, type Devnet } from '../../src/chain-ingest/evm/devnet/start-devnet.ts';
import { parseChainMessage } from '../../src/chain-ingest/chain-messages.ts';
import { createHttpWebhookSender, type WebhookSender } from '../../src/webhooks/webhook-sender.ts';
import { apiClient } from '../../test/support/api-client.ts';
import { createJsonRpc } from '../../src/chain-ingest/evm/devnet/json-rpc.ts';
import {
  deadline,
  distribution,
  fmt,
  leftoverHardhatChildren,
  loadAverage1m,
  machineInfo,
  machineLoad,
  markdownTable,
  numberFlag,
  stringFlag,
  type Distribution,
} from './support/bench-env.ts';

const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const TARGET_P50_MS = 50;
const TARGET_P99_MS = 250;
const USDC_UNITS = 1_000_000n; // 1 USDC (6 decimals) = unitAmount 100000000 (10^8 scale)

type Settings = {
  payments: number;
  warmup: number;
  pollMs: number;
  gapMs: number;
  events: 'all' | 'completed';
  reveal: boolean;
  probes: boolean;
  jsonOut: string | null;
  timeoutS: number;
};

function readSettings(argv: readonly string[]): Settings {
  const events = stringFlag(argv, '--events') ?? 'all';
  if (events !== 'all' && events !== 'completed') throw new Error(`--events must be all or completed, got ${events}`);
  return {
    payments: numberFlag(argv, '--payments', 200, 1, 10_000),
    warmup: numberFlag(argv, '--warmup', 5, 0, 1_000),
    pollMs: numberFlag(argv, '--poll-ms', 20, 1, 10_000),
    gapMs: numberFlag(argv, '--gap-ms', 50, 0, 10_000),
    events,
    reveal: argv.includes('--reveal'),
    probes: !argv.includes('--no-probes'),
    jsonOut: stringFlag(argv, '--json') ?? null,
    timeoutS: numberFlag(argv, '--timeout-s', 600, 10, 3_600),
  };
}

/** Timestamps (performance.now(), ms) of one payment's way through the pipeline. */
type PaymentTrace = {
  /** Warm-up payments (JIT, connections, the follower's first socket head) are not counted. */
  warmup: boolean;
  sessionId: string;
  address: Address;
  txHash: string;
  blockNumber: number | null;
  signed: Hex;
  sendStart?: number;
  sent?: number;
  wsHead?: number;
  transferPublished?: number;
  finalPublished?: number;
  detectedAppended?: number;
  completedAppended?: number;
  completedPosition?: bigint;
  projected?: number;
  dispatcherSend?: number;
  received?: number;
};

type Session = { id: string; addresses: { asset: { id: string; currency: string }; paymentAddress: string }[] };

type Receiver = { url: string; server: Server; close(): Promise<void> };

/** Records the arrival of every webhook; `onHook` sees the parsed type and object id. */
async function startReceiver(onHook: (type: string, objectId: string, at: number) => void): Promise<Receiver> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = performance.now();
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          type?: string;
          data?: { object?: { id?: string } };
        };
        onHook(body.type ?? '', body.data?.object?.id ?? '', at);
      } catch {
        onHook('', '', at);
      }
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    server,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function main(): Promise<void> {
  const settings = readSettings(process.argv.slice(2));
  const before = machineLoad();
  console.error(`[bench] ${before.uptime}`);
  if (before.busyProcesses.length > 0)
    console.error(`[bench] other busy processes:\n  ${before.busyProcesses.join('\n  ')}`);

  const dir = await mkdtemp(join(tmpdir(), 'weir-bench-detection-'));
  let devnet: Devnet | undefined;
  let weir: Weir | undefined;
  let receiver: Receiver | undefined;
  let closeSocket: (() => void) | undefined;
  const cleanUp = async (): Promise<void> => {
    closeSocket?.();
    await weir?.stop().catch((error: unknown) => console.error('[bench] weir stop:', error));
    await receiver?.close().catch(() => undefined);
    await devnet?.stop().catch((error: unknown) => console.error('[bench] devnet stop:', error));
    await rm(dir, { recursive: true, force: true });
  };
  const guard = deadline(settings.timeoutS * 1000, 'detection-latency', cleanUp);

  try {
    const startedAt = performance.now();
    devnet = await startDevnet({ port: 0 });
    const devnetFile = join(dir, 'devnet.json');
    await writeDevnetInfo(devnetFile, devnet.info);
    console.error(`[bench] devnet at ${devnet.info.rpcUrl} (${Math.round(performance.now() - startedAt)} ms)`);

    const traces: PaymentTrace[] = [];
    const bySession = new Map<string, PaymentTrace>();
    const byTx = new Map<string, PaymentTrace>();
    const byBlock = new Map<number, PaymentTrace>();
    const completionWaiters = new Map<string, () => void>();
    /** newHeads seen before the block's transfer told which payment it carries. */
    const pendingHeads = new Map<number, number>();
    const pendingProjection = new Set<PaymentTrace>();
    const hookCounts = new Map<string, number>();
    let lastHookAt = performance.now();

    receiver = await startReceiver((type, objectId, at) => {
      lastHookAt = at;
      hookCounts.set(type, (hookCounts.get(type) ?? 0) + 1);
      if (type !== 'checkout_session.completed') return;
      const trace = bySession.get(objectId);
      if (trace === undefined || trace.received !== undefined) return;
      trace.received = at;
      completionWaiters.get(objectId)?.();
    });

    const logLines: string[] = [];
    const baseSender = createHttpWebhookSender();
    const sender: WebhookSender = async (request) => {
      if (settings.probes) {
        const at = performance.now();
        // The body is JSON rendered by Weir: only its type and object id are needed here.
        const typeMatch = /"type":"checkout_session\.completed"/.test(request.body);
        if (typeMatch) {
          const id = /"data":\{"object":\{"id":"([^"]+)"/.exec(request.body)?.[1];
          const trace = id === undefined ? undefined : bySession.get(id);
          if (trace !== undefined && trace.dispatcherSend === undefined) trace.dispatcherSend = at;
        }
      }
      return baseSender(request);
    };

    weir = await startWeir(
      {
        port: 0,
        host: '127.0.0.1',
        dataDir: join(dir, 'data'),
        adminToken: ADMIN_TOKEN,
        chainEnv: {},
        devnetFile,
      },
      {
        log: (line) => logLines.push(`${Math.round(performance.now())} ${line}`),
        followerPollIntervalMs: settings.pollMs,
        sweepBatchDelayMs: 3_600_000,
        webhookSender: sender,
      },
    );
    const started = weir;

    // ---- merchant setup ------------------------------------------------------------------------
    const created = await apiClient(started.url, ADMIN_TOKEN).post<{ testSecretKey: string }>('/admin/organizations', {
      name: 'Bench Shop',
    });
    if (created.status !== 200) throw new Error(`organization: ${created.status} ${JSON.stringify(created.body)}`);
    const api = apiClient(started.url, created.body.testSecretKey);
    const merchant = devnetAccount(devnet.info, 'merchant').address;
    const wallet = await api.post('/api/v1/organization/withdrawal-addresses', {
      chainId: 31337,
      address: merchant,
      name: 'treasury',
    });
    if (wallet.status !== 200) throw new Error(`withdrawal address: ${wallet.status} ${JSON.stringify(wallet.body)}`);
    const events = settings.events === 'all' ? ['*'] : ['checkout_session.completed'];
    const endpoint = await api.post('/api/v1/webhook-endpoints', {
      description: 'bench',
      url: receiver.url,
      enabledEvents: { events },
    });
    if (endpoint.status !== 200)
      throw new Error(`webhook endpoint: ${endpoint.status} ${JSON.stringify(endpoint.body)}`);

    // ---- probes --------------------------------------------------------------------------------
    if (settings.probes) {
      const socket = await getWebSocketRpcClient(
        devnet.info.wsUrl,
        { keepAlive: false, reconnect: false } /* not the follower's cached socket (it keeps alive) */,
      );
      closeSocket = () => socket.close();
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error('the bench newHeads subscription got no answer within 10 s')),
          10_000,
        );
        socket.request({
          body: { method: 'eth_subscribe', params: ['newHeads'] },
          onResponse: (message: { method?: string; result?: unknown; params?: { result?: { number?: string } } }) => {
            const at = performance.now();
            if (message.method !== 'eth_subscription') {
              clearTimeout(timer);
              resolve();
              return;
            }
            const number = message.params?.result?.number;
            if (typeof number !== 'string') return;
            const height = Number.parseInt(number, 16);
            const trace = byBlock.get(height);
            if (trace !== undefined) trace.wsHead ??= at;
            else pendingHeads.set(height, at);
          },
          onError: (error) => {
            clearTimeout(timer);
            reject(error instanceof Error ? error : new Error('the bench newHeads socket failed'));
          },
        });
      });
      await started.bus.consume({ durableName: 'bench-observer', filterSubject: 'chain.>' }, async (raw) => {
        const at = performance.now();
        const message = parseChainMessage(raw.subject, raw.data);
        if (message.type === 'transfer') {
          const trace = byTx.get(message.transactionHash.toLowerCase());
          if (trace === undefined) return;
          trace.transferPublished ??= at;
          trace.blockNumber = message.blockNumber;
          byBlock.set(message.blockNumber, trace);
          const head = pendingHeads.get(message.blockNumber);
          if (head !== undefined) trace.wsHead ??= head;
        } else if (message.type === 'final') {
          const trace = byBlock.get(message.blockNumber);
          if (trace !== undefined) trace.finalPublished ??= at;
        }
      });
      let readPosition = await started.eventStore.headPosition();
      let reading = false;
      let again = false;
      const stamps: number[] = [];
      const readNew = async (): Promise<void> => {
        if (reading) {
          again = true;
          return;
        }
        reading = true;
        try {
          do {
            again = false;
            const at = stamps.shift() ?? performance.now();
            for (;;) {
              const appended = await started.eventStore.readAll(readPosition, 500);
              if (appended.length === 0) break;
              readPosition = appended.at(-1)!.position;
              for (const event of appended) {
                if (!event.streamId.startsWith('checkout_session-')) continue;
                const trace = bySession.get(event.streamId.slice('checkout_session-'.length));
                if (trace === undefined) continue;
                if (event.type === 'PaymentDetected') trace.detectedAppended ??= at;
                if (event.type === 'CheckoutSessionCompleted' && trace.completedAppended === undefined) {
                  trace.completedAppended = at;
                  trace.completedPosition = event.position;
                  pendingProjection.add(trace);
                }
              }
            }
          } while (again);
        } finally {
          reading = false;
        }
      };
      started.eventStore.onAppended(() => {
        stamps.push(performance.now());
        void readNew();
      });
      started.projections.onAdvanced((position) => {
        const at = performance.now();
        for (const trace of pendingProjection) {
          if (trace.completedPosition !== undefined && position >= trace.completedPosition) {
            trace.projected = at;
            pendingProjection.delete(trace);
          }
        }
      });
    }

    // ---- sessions, created before any payment --------------------------------------------------
    const sessions: Session[] = [];
    for (let index = 0; index < settings.warmup + settings.payments; index++) {
      const response = await api.post<Session>('/api/v1/checkout/sessions', {
        successUrl: 'https://shop.example/ok',
        clientReferenceId: `bench-${index}`,
        lineItems: {
          data: [
            {
              priceData: { currency: 'usdc', unitAmount: '100000000', productData: { name: 'Bench item' } },
              quantity: 1,
            },
          ],
        },
      });
      if (response.status !== 200)
        throw new Error(`session ${index}: ${response.status} ${JSON.stringify(response.body)}`);
      const session = response.body;
      const usdc = session.addresses.find((address) => address.asset.currency === 'usdc');
      if (usdc === undefined) throw new Error(`session ${session.id} offers no USDC address`);
      if (settings.reveal) {
        const reveal = await apiClient(started.url).post(`/checkout/${session.id}/payment-method`, {
          assetId: usdc.asset.id,
        });
        if (reveal.status !== 200)
          throw new Error(`reveal ${session.id}: ${reveal.status} ${JSON.stringify(reveal.body)}`);
      }
      sessions.push(session);
    }

    // ---- pre-signed payments -------------------------------------------------------------------
    const payerKey = devnet.info.accounts.filter((account) => account.role === 'payer')[0]!.privateKey;
    const payer = privateKeyToAccount(payerKey);
    const rpc = createJsonRpc(devnet.info.rpcUrl);
    const firstNonce = Number.parseInt(
      (await rpc('eth_getTransactionCount', [payer.address, 'pending'])) as string,
      16,
    );
    const usdcAddress = devnet.info.contracts.usdc;
    for (const [index, session] of sessions.entries()) {
      const address = getAddress(session.addresses.find((a) => a.asset.currency === 'usdc')!.paymentAddress);
      const signed = await payer.signTransaction({
        chainId: devnet.info.chainId,
        type: 'eip1559',
        to: usdcAddress,
        data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [address, USDC_UNITS] }),
        gas: 120_000n,
        maxFeePerGas: 100_000_000_000n,
        maxPriorityFeePerGas: 1_000_000_000n,
        nonce: firstNonce + index,
        value: 0n,
      });
      const trace: PaymentTrace = {
        warmup: index < settings.warmup,
        sessionId: session.id,
        address,
        txHash: keccak256(signed).toLowerCase(),
        blockNumber: null,
        signed,
      };
      traces.push(trace);
      bySession.set(session.id, trace);
      byTx.set(trace.txHash, trace);
    }

    // Let the creation webhooks and projections finish, and the follower's socket come up, before measuring.
    await waitQuiet(() => lastHookAt, 500, 30_000);
    const socketWaitUntil = performance.now() + 10_000;
    while (headSourceFromLog(logLines) !== 'websocket' && performance.now() < socketWaitUntil) await sleep(50);
    console.error(
      `[bench] ${sessions.length} sessions ready (${settings.warmup} warm-up); follower heads: ${headSourceFromLog(logLines)}; paying`,
    );
    let socketFailuresBefore = 0;

    // ---- measure -------------------------------------------------------------------------------
    let loadBefore = loadAverage1m();
    let cpuBefore = process.cpuUsage();
    let measureStarted = performance.now();
    let headSourceAtStart = headSourceFromLog(logLines);
    const failures: string[] = [];
    for (const [index, trace] of traces.entries()) {
      if (index === settings.warmup) {
        loadBefore = loadAverage1m();
        cpuBefore = process.cpuUsage();
        measureStarted = performance.now();
        headSourceAtStart = headSourceFromLog(logLines);
        socketFailuresBefore = socketFailures(logLines);
      }
      const completed = new Promise<void>((resolve) => completionWaiters.set(trace.sessionId, resolve));
      trace.sendStart = performance.now();
      const hash = await rpc('eth_sendRawTransaction', [trace.signed]);
      trace.sent = performance.now();
      if (typeof hash !== 'string' || hash.toLowerCase() !== trace.txHash)
        failures.push(`payment ${index}: eth_sendRawTransaction answered ${JSON.stringify(hash)}`);
      const timedOut = await Promise.race([completed.then(() => false), sleep(30_000).then(() => true)]);
      completionWaiters.delete(trace.sessionId);
      if (timedOut) {
        failures.push(`payment ${index} (${trace.sessionId}): no checkout_session.completed within 30 s`);
        if (failures.length >= 3) throw new Error(failures.join('; '));
      }
      if ((index + 1) % 50 === 0)
        console.error(`[bench] ${index + 1}/${traces.length} payments (${settings.warmup} warm-up)`);
      if (settings.gapMs > 0) await sleep(settings.gapMs);
    }
    const measureMs = performance.now() - measureStarted;
    const cpu = process.cpuUsage(cpuBefore);
    const loadAfter = loadAverage1m();
    const headSource = headSourceFromLog(logLines);

    // ---- report --------------------------------------------------------------------------------
    const done = traces.filter((trace) => !trace.warmup && trace.received !== undefined && trace.sent !== undefined);
    const latency = distribution(done.map((trace) => trace.received! - trace.sent!));
    const stage = (from: keyof PaymentTrace, to: keyof PaymentTrace): Distribution | null => {
      const values = done
        .filter((trace) => typeof trace[from] === 'number' && typeof trace[to] === 'number')
        .map((trace) => (trace[to] as number) - (trace[from] as number));
      return values.length === 0 ? null : distribution(values);
    };
    const stages: [string, keyof PaymentTrace, keyof PaymentTrace][] = [
      ['eth_sendRawTransaction round trip (before t0, not counted)', 'sendStart', 'sent'],
      ['t0 → newHeads announced (bench socket)', 'sent', 'wsHead'],
      ['t0 → transfer published on the bus', 'sent', 'transferPublished'],
      [
        'transfer published → PaymentDetected appended (matcher: RecordTransfer)',
        'transferPublished',
        'detectedAppended',
      ],
      [
        'PaymentDetected → CheckoutSessionCompleted appended (matcher: waits for projections, then ConfirmTransfer on the final)',
        'detectedAppended',
        'completedAppended',
      ],
      ['CheckoutSessionCompleted appended → projected', 'completedAppended', 'projected'],
      ['projected → dispatcher starts the POST', 'projected', 'dispatcherSend'],
      ['dispatcher POST → arrival at the receiver', 'dispatcherSend', 'received'],
    ];
    // The follower publishes the block's final right after its transfers, before the matcher is done with the transfer.
    const breakdown = [
      ...stages.map(([name, from, to]) => ({ stage: name, ms: stage(from, to) })),
      { stage: '(aside) transfer published → final published', ms: stage('transferPublished', 'finalPublished') },
    ];

    const summary = {
      benchmark: 'evm-detection-latency',
      date: new Date().toISOString(),
      machine: machineInfo(),
      load: {
        uptimeBefore: before.uptime,
        loadAverage1m: { before: loadBefore, after: loadAfter },
        busyProcessesBefore: before.busyProcesses,
        busyProcessesAfter: machineLoad().busyProcesses,
      },
      settings: {
        ...settings,
        confirmations: 1,
        sweepBatchDelayMs: 3_600_000,
        stores: 'embedded (SQLite event store, embedded read store, in-process bus)',
      },
      followerHeadSource: {
        atStart: headSourceAtStart,
        atEnd: headSource,
        websocketFailuresDuringMeasurement: socketFailures(logLines) - socketFailuresBefore,
      },
      payments: {
        warmup: settings.warmup,
        measured: traces.length - settings.warmup,
        completed: done.length,
        failures,
      },
      latencyMs: latency,
      targets: {
        p50: { targetMs: TARGET_P50_MS, valueMs: latency.p50, met: latency.p50 <= TARGET_P50_MS },
        p99: { targetMs: TARGET_P99_MS, valueMs: latency.p99, met: latency.p99 <= TARGET_P99_MS },
      },
      breakdownMs: settings.probes ? breakdown : null,
      process: {
        measureWallMs: Math.round(measureMs),
        cpuUserMs: Math.round(cpu.user / 1000),
        cpuSystemMs: Math.round(cpu.system / 1000),
        rssMiB: Math.round(process.memoryUsage().rss / 2 ** 20),
      },
      webhooksReceived: Object.fromEntries(hookCounts),
      slowest: [...done]
        .sort((a, b) => b.received! - b.sent! - (a.received! - a.sent!))
        .slice(0, 5)
        .map((trace) => ({
          sessionId: trace.sessionId,
          totalMs: +(trace.received! - trace.sent!).toFixed(1),
          ...Object.fromEntries(
            stages
              .slice(1)
              .map(([name, from, to]) => [
                name,
                typeof trace[from] === 'number' && typeof trace[to] === 'number'
                  ? +((trace[to] as number) - (trace[from] as number)).toFixed(1)
                  : null,
              ]),
          ),
        })),
      followerLog: logLines.filter((line) => /ingest/.test(line)).slice(0, 50),
    };
    const json = JSON.stringify(summary, null, 2);
    if (settings.jsonOut !== null) await writeFile(settings.jsonOut, `${json}\n`);
    console.log(json);
    console.log('');
    console.log(
      markdownTable(
        ['Measure', 'n', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'target', 'met?'],
        [
          [
            't0 (eth_sendRawTransaction returned) → checkout_session.completed received',
            latency.n,
            fmt(latency.p50, 1),
            fmt(latency.p90, 1),
            fmt(latency.p99, 1),
            fmt(latency.max, 1),
            `p50 ≤ ${TARGET_P50_MS}, p99 ≤ ${TARGET_P99_MS}`,
            `${summary.targets.p50.met ? 'yes' : 'NO'} / ${summary.targets.p99.met ? 'yes' : 'NO'}`,
          ],
        ],
        [false, true, true, true, true, true, false, false],
      ),
    );
    if (settings.probes) {
      console.log('');
      console.log(
        markdownTable(
          ['Stage', 'n', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'],
          breakdown.map(({ stage: name, ms }) => [
            name,
            ms?.n ?? 0,
            ms === null ? '–' : fmt(ms.p50, 1),
            ms === null ? '–' : fmt(ms.p90, 1),
            ms === null ? '–' : fmt(ms.p99, 1),
            ms === null ? '–' : fmt(ms.max, 1),
          ]),
          [false, true, true, true, true, true],
        ),
      );
    }
    console.log('');
    console.log(
      `Follower heads: ${headSourceAtStart} at the start, ${headSource} at the end (${summary.followerHeadSource.websocketFailuresDuringMeasurement} websocket failures while measuring). Load average (1 min) ${loadBefore} → ${loadAfter}.`,
    );
  } finally {
    await cleanUp();
    guard.clear();
    const left = leftoverHardhatChildren();
    if (left.length > 0) console.error(`[bench] hardhat processes left: ${left.join('; ')}`);
  }
}

function socketFailures(lines: readonly string[]): number {
  return lines.filter((line) => /websocket .* failed/.test(line)).length;
}

function headSourceFromLog(lines: readonly string[]): 'websocket' | 'polling' {
  const last = [...lines].reverse().find((line) => /new heads from websocket|websocket .* failed/.test(line));
  return last !== undefined && /new heads from websocket/.test(last) ? 'websocket' : 'polling';
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Waits until nothing has happened (per `lastActivity`) for `quietMs`, at most `maxMs`. */
async function waitQuiet(lastActivity: () => number, quietMs: number, maxMs: number): Promise<void> {
  const until = performance.now() + maxMs;
  while (performance.now() < until) {
    if (performance.now() - lastActivity() >= quietMs) return;
    await sleep(50);
  }
}

await main();
