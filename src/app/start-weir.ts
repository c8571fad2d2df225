import { hkdfSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createCommandHandler, type CommandHandler } from '../actors/command-handler.ts';
import {
  type BridgeCredential,
  bridgeCredential,
  bridgeInvitation,
  INSPECTOR_TOKEN_FILE,
  openInspector,
} from '../inspect/inspector.ts';
import { createMachineInspection } from '../inspect/machine-inspection.ts';
import { createCheckoutSessionCreator } from '../actors/create-checkout-session.ts';
import { createLineItemResolver } from '../actors/line-items.ts';
import type { Bus } from '../bus/bus.ts';
import { BusConnectionError } from '../bus/errors.ts';
import { openBus } from '../bus/open-bus.ts';
import { untilReachable } from '../shared/until-reachable.ts';
import type { WaitingLog } from './open-event-log.ts';
import { openStores } from './open-stores.ts';
import { createMatcher } from '../chain-ingest/matcher.ts';
import { combineRails, combinedRecovery, everyNetwork, type Rail, type RailFollower } from '../chain-ingest/rail.ts';
import { createEvmRail } from '../chain-ingest/evm/evm-rail.ts';
import { createSolanaIngest, KNOWN_SOLANA_CHAIN_IDS } from '../chain-ingest/solana/solana-ingest.ts';
import type { SolanaLocalInfo } from '../chain-ingest/solana/solana-setup.ts';
import { createTronIngest, KNOWN_TRON_CHAIN_IDS } from '../chain-ingest/tron/tron-ingest.ts';
import type { TronLocalInfo } from '../chain-ingest/tron/tron-setup.ts';
import { loadEvmSetup } from '../chain-ingest/evm/evm-setup.ts';
import { startLocalChainOrWarn } from '../chain-ingest/evm/devnet/local-chain.ts';
import { startEmbeddedLocalTronOrWarn, tronOfDevnetFile } from '../chain-ingest/tron/devnet/tron-devnet.ts';
import { createEvmGasFeeQuoter, parseNativePrices } from '../chain-ingest/evm/evm-gas-fee.ts';
import type { GasFeeQuoter } from '../chain-ingest/gas-fee.ts';
import { createWatchedAddresses } from '../chain-ingest/watched-addresses.ts';
import { solanaReferencesProjection } from './solana-references-projection.ts';
import { openDeposits } from './open-deposits.ts';
import { createPaymentIntents, createRecoveryReads, watchedAddressesProjection } from './payment-intents.ts';
import { createSweeper, sweepMetrics } from '../sweeper/sweeper.ts';
import { SWEEPS, type SweepDoc } from '../projections/sweeps.projection.ts';
import type { EventStore } from '../event-store/event-store.ts';
import { SQLITE_EVENT_STORE_FILE } from '../event-store/open-event-store.ts';
import { ALL_PROJECTIONS } from '../projections/all-projections.ts';
import { createProjectionRunner, registerLagMetrics, type ProjectionRunner } from '../projections/projection-runner.ts';
import { createSharedProjections } from '../projections/shared-projections.ts';
import type { ApiBridge } from '../read-api/api-bridge.ts';
import { createApiApp } from '../read-api/app.ts';
import { createDashboard } from '../dashboard/app.tsx';
import { createCsrf } from '../dashboard/auth/csrf.ts';
import { createDashboardSessions, type SessionLimits } from '../dashboard/auth/sessions.ts';
import { createSetupToken, SETUP_TOKEN_FILE } from '../dashboard/auth/setup-token.ts';
import { createSignInThrottle, type SignInThrottleLimits } from '../dashboard/auth/throttle.ts';
import { createDashboardEvents } from '../dashboard/events.ts';
import type { DashboardPage } from '../dashboard/page.ts';
import { USERS } from '../projections/team.projection.ts';
import { continueWhenRead } from '../read-api/request-body.ts';
import { createHealth } from './health.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import { createSystemClock, type Clock } from '../shared/clock.ts';
import { settleWithin } from '../shared/settle-within.ts';
import { createSecretBox, loadMasterKey } from '../tenancy/secrets.ts';
import { scheduleCheckpoints } from '../audit/checkpoints.ts';
import { OPERATOR_KEY_FILE, loadOperatorKey } from '../audit/operator-key.ts';
import { createTimerRunner, type TimerRunner } from '../timers/timer-runner.ts';
import { createChainReadGate } from '../timers/chain-read-gate.ts';
import { checkoutSessionTimerHandlers } from '../timers/checkout-session-timers.ts';
import { couponTimerHandlers } from '../timers/coupon-timers.ts';
import { invoiceTimerHandlers } from '../timers/invoice-timers.ts';
import { subscriptionTimerHandlers } from '../timers/subscription-timers.ts';
import { createMailDispatcher } from '../mail/mail-dispatcher.ts';
import { openMailer } from '../mail/open-mailer.ts';
import type { Mailer } from '../mail/mailer.ts';
import { createWebhookDispatcher, type WebhookDispatcher } from '../webhooks/webhook-dispatcher.ts';
import { presentersOnceKnown } from '../webhooks/webhook-events.ts';
import { sessionPresenter } from '../read-api/routes/checkout-sessions.ts';
import { paymentIntentPresenter } from '../read-api/routes/payment-intents.ts';
import type { OpenApiDocuments } from '../read-api/routes/api-docs.ts';
import { openOwnership } from '../ownership/open-ownership.ts';
import { publicKeyFingerprint, secretKeyFingerprint } from '../ownership/shared-keys.ts';
import { ownWorkflows, type WorkflowPositions } from '../workflows/all-workflows.ts';
import { createSharedMetrics } from '../ownership/shared-metrics.ts';
import { registerFollowerMetrics } from '../chain-ingest/evm/follower/follower-metrics.ts';
import { registerProcessorMetrics } from '../processing/processor.ts';
import {
  componentWork,
  fencedAppends,
  fencedCommands,
  fencedMailer,
  fencedSweepExecutor,
  fencedWebhookSender,
} from './owned-work.ts';
import { createHttpWebhookSender, type WebhookSender } from '../webhooks/webhook-sender.ts';
import { webhookTargetPolicy } from '../webhooks/webhook-target.ts';
import { DEFAULT_CHAIN_WAIT_MAX_SECONDS, localChainsOf, rateLimitsOf, type WeirConfig } from './config.ts';
import { DataDirInUseError, lockDataDir, prepareDataDir } from './data-dir.ts';
import { portBelongingCheck, refuseForeignReadModels, setAsideForeignReadModels } from './foreign-read-models.ts';
import { createActivityLog } from './activity-log.ts';
import { createShutdownStack, type ShutdownStack } from './shutdown-stack.ts';
import { createLineLogger, createLogger, logTo, type Log, type Logger } from '../shared/logger.ts';
import { createPrometheusMetrics } from './prometheus-metrics.ts';
import { meteredEventStore } from '../event-store/metered-event-store.ts';
import { metricsAccess } from '../read-api/http-metrics.ts';
import type { SpanExporter } from '@opentelemetry/sdk-trace-node';
import { noTracer, openTracing } from '../shared/tracing.ts';
import { tracedAppends, tracedCommands, tracedSweepExecutor, tracedWebhookSender } from './traced-work.ts';

const VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/** What a start that may have failed gave: null when it failed (its reason is thrown elsewhere). */
const startedOf = <T>(settled: PromiseSettledResult<T>): T | null =>
  settled.status === 'fulfilled' ? settled.value : null;

/** How long `startWeir` waits for each chain follower's starting point before taking requests anyway. */
const FOLLOWER_READY_TIMEOUT_MS = 15_000;

export type Weir = {
  url: string;
  /** The address payers and links are given (`PUBLIC_URL`, else `url`). */
  publicUrl: string;
  port: number;
  clock: Clock;
  eventStore: EventStore;
  readStore: ReadStore;
  bus: Bus;
  commands: CommandHandler;
  projections: ProjectionRunner;
  /** Where each workflow is in the log, where it runs (null elsewhere). */
  workflows: WorkflowPositions;
  /** The webhook dispatcher, for its status (queued, in flight). */
  webhooks: Pick<WebhookDispatcher, 'status'>;
  /**
   * The dashboard's one-time first-run token, while no dashboard user exists; kept in the data dir's
   * `dashboard-setup-token` file, never in a log line or an address (it is posted on the page).
   */
  dashboardSetupToken: string | null;
  /** The inspector's bridge page (`--inspect PORT`) and the token its sockets need; never in a log line. */
  inspectorPage: { page: string; credential: BridgeCredential } | null;
  /** Stops everything and lets go of the data dir; `reason` (e.g. the signal) goes in the log line. */
  stop(reason?: string): Promise<void>;
};

export type WeirOverrides = {
  clock?: Clock;
  rails?: Rail[];
  /** Rails offered before the EVM rail (tests inject the test rail, `createTestRail`, here). */
  extraRails?: Rail[];
  webhookSender?: WebhookSender;
  /** Where Weir logs (default: JSON lines on stdout, or pretty ones, at the configured level). */
  logger?: Logger;
  /** Instead of `logger`: every log line (JSON) goes here (tests capture or drop them). */
  log?: (line: string) => void;
  /** Where mails go instead of SMTP or the outbox folder (tests). */
  mailer?: Mailer;
  /** Prices the sweep gas payers pay with `applyGasFee` instead of the EVM nodes (tests: a fixed quote on the test rail). */
  gasFees?: GasFeeQuoter;
  /** How often followers poll for new heads when no WebSocket is live. */
  followerPollIntervalMs?: number;
  /** A local Solana cluster to offer (tests, `weir devnet`): its RPC URL and test mints. */
  solanaLocal?: SolanaLocalInfo;
  /** How often the Solana followers poll a reference at first (they back off while nothing comes). */
  solanaPollIntervalMs?: number;
  /** A local Tron (anvil behind the Tron-flavoured proxy) to offer (tests) instead of the embedded one: its endpoints, contracts and sweeper. */
  tronLocal?: TronLocalInfo;
  /** How often the Tron reconciler compares deposit balances with credits (default 60 s). */
  tronReconcileIntervalMs?: number;
  /** How often the EVM reconciler compares native deposit balances with credits (default 60 s). */
  evmReconcileIntervalMs?: number;
  /** false: no EVM reconciler (tests of what the follower alone sees). */
  evmReconciler?: boolean;
  /** false: start no EVM follower, as if it were down (tests of payments only recovery credits). */
  evmFollowers?: boolean;
  /** false: start no Tron follower, as `evmFollowers` (tests of TRX payments only recovery credits). */
  tronFollowers?: boolean;
  /** How long confirmed payments wait to be swept together (default 5 s). */
  sweepBatchDelayMs?: number;
  /**
   * A read store this instance shares with others, as MongoDB is shared (tests: one store handed to
   * two instances in one process). Its projections are then written by the owner of the
   * `projections` work only. Not closed by `stop`: it is the caller's.
   */
  sharedReadStore?: ReadStore;
  /** OpenAPI documents other Weirs of this process built, to serve theirs when the routes are the same (tests). */
  openApiDocuments?: OpenApiDocuments;
  /** Where spans go instead of OTLP/HTTP (tests: an InMemorySpanExporter); tracing is on with one. */
  spanExporter?: SpanExporter;
  /** Wraps the read store the whole process uses (tests of a store outage). */
  wrapReadStore?: (readStore: ReadStore) => ReadStore;
  /** Wraps the bus the whole process uses (tests of a matcher that has not handled what followers published). */
  wrapBus?: (bus: Bus) => Bus;
  /** Wraps the projection runner the whole process uses (tests of read models that lag). */
  wrapProjections?: (runner: ProjectionRunner) => ProjectionRunner;
  /** The first wait before connecting again to a service not up yet (default 0.5 s, doubling to 30 s). */
  connectRetryFirstDelayMs?: number;
  /** The dashboard's session expiry and sign-in throttle (tests make them short or tight). */
  dashboard?: {
    sessionLimits?: Partial<SessionLimits>;
    signInLimits?: SignInThrottleLimits;
    /** Page modules mounted beside those of src/dashboard/pages (tests of the guards). */
    extraPages?: DashboardPage[];
  };
};

const listenUrlOf = (host: string, port: number) => `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

/** Where payers and receivers reach Weir: the configured public URL, else where it listens. */
const publicUrlOf = (config: Pick<WeirConfig, 'publicUrl' | 'host'>, port: number) =>
  (config.publicUrl ?? listenUrlOf(config.host, port)).replace(/\/$/, '');

/**
 * Everything in one process: API, projections, matcher, webhook dispatcher and timers. Read
 * models catch up with the log before the server listens, so the first request sees everything.
 * The data dir is made private (0700, files 0600) and locked to this process until `stop`.
 */
export async function startWeir(config: WeirConfig, overrides: WeirOverrides = {}): Promise<Weir> {
  const logger =
    overrides.logger ??
    (overrides.log
      ? createLineLogger(overrides.log, config.logLevel)
      : createLogger({ level: config.logLevel, pretty: config.logPretty }));
  const log = logTo(logger);
  logger.info(
    { event: 'weir.starting', version: VERSION, dataDir: config.dataDir, port: config.port, host: config.host },
    `weir ${VERSION} starting`,
  );
  await prepareDataDir(config.dataDir, log);
  const releaseLock = await lockDataDir(config.dataDir, log).catch((error: unknown) => {
    // The last line a log collector gets from a server that exits: why it did not start.
    if (error instanceof DataDirInUseError)
      logger.error({ event: 'data_dir.in_use', dataDir: config.dataDir, heldBy: error.pid }, error.message);
    throw error;
  });
  const opened = createShutdownStack((error) =>
    logger.error({ event: 'weir.close_failed', err: error }, `could not close: ${(error as Error).message}`),
  );
  try {
    return await startLocked(config, overrides, logger, releaseLock, opened);
  } catch (error) {
    // What opened before the failure closes first: an embedder that catches it keeps no port, connection or child.
    await opened.close();
    await releaseLock();
    throw error;
  }
}

/** startWeir once the data dir is this process's: what opens is added to `opened`; `stop` closes it, then lets go of the data dir. */
async function startLocked(
  config: WeirConfig,
  overrides: WeirOverrides,
  logger: Logger,
  releaseLock: () => Promise<void>,
  opened: ShutdownStack,
): Promise<Weir> {
  const log: Log = logTo(logger);
  const clock = overrides.clock ?? createSystemClock();
  const waiting: WaitingLog = (line, fields) => logger.warn({ event: 'weir.waiting', ...fields }, line);
  // First, so that its port being taken fails the start before anything else is running.
  const credential = config.inspect ? bridgeCredential(join(config.dataDir, INSPECTOR_TOKEN_FILE)) : null;
  const inspector =
    config.inspect && credential ? await openInspector(config.inspect, { logger, token: credential.token }) : null;
  if (inspector && credential) {
    opened.add(() => inspector.stop());
    logger.info(
      { event: 'weir.inspecting', url: inspector.url, page: inspector.page },
      inspector.page
        ? `statecharts shown live: open ${bridgeInvitation(inspector.page, credential, false)} (the Stately inspector)`
        : `statecharts shown live through the inspector at ${inspector.url}`,
    );
  }
  // Read models of another backup or data dir would be served as this log's: set aside, they are built anew from it.
  const throughPorts = portBelongingCheck({
    kurrentDb: !!config.kurrentDbUrl,
    mongoDb: !!config.mongoDbUrl,
    sharedReadStore: !!overrides.sharedReadStore,
    dataDir: config.dataDir,
    eventStoreFile: config.eventStoreFile,
  });
  if (throughPorts === null)
    await setAsideForeignReadModels({
      dataDir: config.dataDir,
      log: config.eventStoreFile ?? join(config.dataDir, SQLITE_EVENT_STORE_FILE),
      now: clock.now(),
      logger,
    });
  const stores = await openStores(config, waiting, overrides.sharedReadStore);
  opened.add(() => stores.eventStore.close());
  // A shared read store is the caller's.
  if (!overrides.sharedReadStore) opened.add(() => stores.readStore.close());
  // Not files of the data dir to set aside: the operator's (or shared), so another log's are refused, not served.
  if (throughPorts) await refuseForeignReadModels(stores, throughPorts, logger);
  // MongoDB is shared by every instance: one of them projects into it (the `projections` work).
  const sharedReadModels = overrides.sharedReadStore !== undefined || !!config.mongoDbUrl;
  // One registry for this Weir, handed to each component that reports figures (GET /metrics).
  const metrics = createPrometheusMetrics();
  // Traces only when OTEL_EXPORTER_OTLP_ENDPOINT is set (or a test gives an exporter).
  const tracing = await openTracing({
    endpoint: process.env['OTEL_EXPORTER_OTLP_ENDPOINT'],
    exporter: overrides.spanExporter,
    version: VERSION,
  });
  if (tracing) opened.add(() => tracing.shutdown());
  const tracer = tracing?.tracer ?? noTracer;
  const eventStore = tracing
    ? tracedAppends(meteredEventStore(stores.eventStore, metrics), tracer)
    : meteredEventStore(stores.eventStore, metrics);
  // Follows the log from here, so what start-up itself records (a recovery, a timer) is logged too.
  const activity = createActivityLog({ eventStore, logger });
  await activity.start();
  opened.add(() => activity.stop());
  const readStore = overrides.wrapReadStore ? overrides.wrapReadStore(stores.readStore) : stores.readStore;
  // Into the log as one structured line each, not a stack trace on stderr.
  const openedBus = await untilReachable(
    'NATS',
    () =>
      openBus({
        natsUrl: config.natsUrl,
        dataDir: config.dataDir,
        onError: (error) => logger.warn({ event: 'bus.trouble' }, `NATS: ${error.message}`),
        log: (line) => logger.warn({ event: 'bus.trouble' }, `NATS: ${line}`),
      }),
    {
      retryable: (error) => error instanceof BusConnectionError,
      log: waiting,
      ...(overrides.connectRetryFirstDelayMs ? { firstDelayMs: overrides.connectRetryFirstDelayMs } : {}),
    },
  );
  opened.add(() => openedBus.close());
  const bus = overrides.wrapBus ? overrides.wrapBus(openedBus) : openedBus;
  const owning = await openOwnership({
    natsUrl: config.natsUrl,
    leaseTtlMs: config.leaseTtlSeconds === undefined ? undefined : config.leaseTtlSeconds * 1000,
    // Real time whatever the domain clock: the NATS server expires the leases in real time.
    clock: createSystemClock(),
    log,
    metrics,
  });
  opened.add(() => owning.close());
  const { ownership } = owning;
  // Components made again at each takeover register their figures once (see shared-metrics).
  const shared = createSharedMetrics(metrics);
  // The follower families exist before (and without) a follower running here, as Prometheus expects.
  registerFollowerMetrics(shared.scoped(), [], clock);
  registerProcessorMetrics(shared.scoped());
  sweepMetrics(shared.scoped(), readStore.collection<SweepDoc>(SWEEPS), []);
  const masterKey = loadMasterKey({ masterKey: config.masterKey, keyFile: join(config.dataDir, 'master.key') });
  const secretBox = createSecretBox(masterKey);
  const operatorKey = loadOperatorKey({ given: config.auditKey, keyFile: join(config.dataDir, OPERATOR_KEY_FILE) });
  await owning.agreeOnKeys([
    { setting: 'WEIR_MASTER_KEY', fingerprint: secretKeyFingerprint(masterKey) },
    { setting: 'WEIR_AUDIT_KEY', fingerprint: publicKeyFingerprint(operatorKey.publicKey) },
  ]);
  // The local chains (test environment only), started together; a devnet file given by the operator
  // replaces them. The local Solana runs in process, in memory; a test may give its own Solana or Tron.
  // WEIR_LOCAL_CHAIN may name some of them only: those not named are not started, so not offered.
  const embedded = localChainsOf(config);
  const locals = await Promise.allSettled([
    embedded.has('evm') ? startLocalChainOrWarn({ dataDir: config.dataDir, log }) : null,
    // litesvm loads only for a local Solana to run.
    embedded.has('solana') && !overrides.solanaLocal
      ? import('../chain-ingest/solana/devnet/local-cluster.ts').then((m) => m.startLocalSolanaOrWarn(log))
      : null,
    embedded.has('tron') && !overrides.tronLocal
      ? startEmbeddedLocalTronOrWarn({ dataDir: config.dataDir, log })
      : null,
  ]);
  // Those that started are stopped with the rest, also when another of them failed to start.
  const [localChain, localSolana, localTron] = [startedOf(locals[0]), startedOf(locals[1]), startedOf(locals[2])];
  for (const local of [localChain, localSolana, localTron]) if (local) opened.add(() => local.stop());
  const failedLocal = locals.find((local) => local.status === 'rejected');
  if (failedLocal) throw failedLocal.reason;
  const evm = await loadEvmSetup({
    env: config.chainEnv ?? {},
    devnetFile: config.devnetFile,
    devnet: localChain?.info,
    rpcConfigFile: config.rpcConfigFile,
    sweeperKey: config.sweeperKey,
    otherChainIds: [...KNOWN_SOLANA_CHAIN_IDS, ...KNOWN_TRON_CHAIN_IDS],
  });
  const solana = await createSolanaIngest({
    env: config.chainEnv ?? {},
    rpcConfigFile: config.rpcConfigFile,
    local: overrides.solanaLocal ?? localSolana?.info ?? null,
    pollIntervalMs: overrides.solanaPollIntervalMs,
  });
  const solanaProjection = solanaReferencesProjection(
    solana.references,
    solana.offered.map((o) => o.network.network),
    () => clock.now(),
  );
  const receiptTimeout =
    config.sweepReceiptTimeoutSeconds === undefined
      ? {}
      : { receiptTimeoutMs: config.sweepReceiptTimeoutSeconds * 1000 };
  const evmRail = createEvmRail({
    registry: evm.registry,
    factories: evm.factories,
    sweeperKey: evm.sweeperKey,
    devnetSweeperKey: evm.devnetSweeperKey,
    ...receiptTimeout,
    ...(overrides.evmReconciler === false ? {} : { openDeposits: openDeposits(readStore) }),
    ...(overrides.evmReconcileIntervalMs === undefined
      ? {}
      : { reconcileIntervalMs: overrides.evmReconcileIntervalMs }),
  });
  // Or the local Tron `weir devnet` runs, named by the devnet file given.
  const offeredTron = localTron ?? (evm.devnet && !overrides.tronLocal ? tronOfDevnetFile(evm.devnet) : null);
  const tron = await createTronIngest({
    env: config.chainEnv ?? {},
    rpcConfigFile: config.rpcConfigFile,
    local: overrides.tronLocal ?? offeredTron?.info ?? null,
    // Mainnet and Nile sweep with the operator's key only, never the devnet's well-known one (the local Tron has its own).
    sweeperKey: evm.sweeperKey,
    openDeposits: openDeposits(readStore),
    ...receiptTimeout,
    ...(overrides.tronReconcileIntervalMs === undefined
      ? {}
      : { reconcileIntervalMs: overrides.tronReconcileIntervalMs }),
  });
  const rails = overrides.rails ?? [...(overrides.extraRails ?? []), evmRail, solana.rail, tron.rail];
  const rail = combineRails(rails);
  const handler = createCommandHandler({
    eventStore,
    clock,
    ...(inspector ? { observe: createMachineInspection(inspector.sink) } : {}),
  });
  const commands = tracing ? tracedCommands(handler, tracer) : handler;
  const watched = createWatchedAddresses();
  const watchedProjection = watchedAddressesProjection(watched);
  const localProjections = [watchedProjection, solanaProjection];
  const sharedRunner = sharedReadModels
    ? createSharedProjections({ eventStore, readStore, local: localProjections, clock, log })
    : null;
  const runner =
    sharedRunner ??
    createProjectionRunner({
      eventStore,
      readStore,
      projections: [...ALL_PROJECTIONS, ...localProjections],
      clock,
      log,
      // Through the shared registry: the processor families are shared with the owned processors.
      metrics: shared.scoped(),
      ...(tracing ? { tracer } : {}),
    });
  if (sharedRunner) registerLagMetrics(metrics, eventStore, clock, () => sharedRunner.position());
  const projections = overrides.wrapProjections ? overrides.wrapProjections(runner) : runner;
  // The watched addresses hold every session in the log as of now: its head, read here, reached.
  const watchedCurrent = async () => {
    const head = await eventStore.headPosition();
    if (head !== null) await projections.waitFor(head, 10_000);
  };
  const started = performance.now();
  if (readStore.durable) await watchedProjection.load(readStore);
  if (readStore.durable) await solanaProjection.load(readStore);
  if (sharedRunner) {
    // Written by one instance at a time, its checkpoint and journal fenced by the lease; read by all (see shared-projections).
    await ownership.own('projections', async (fence) => {
      const writer = createProjectionRunner({
        eventStore,
        readStore,
        projections: ALL_PROJECTIONS,
        clock,
        log,
        journal: true,
        commit: fence,
        ...(tracing ? { tracer } : {}),
      });
      const off = writer.onAdvanced(() => sharedRunner.nudge());
      sharedRunner.writing(writer);
      // A writer that cannot catch up keeps retrying (its health says so) rather than letting the lease go.
      await writer.start().catch((error: unknown) => log(`[projections] ${(error as Error).message}`));
      return {
        async stop() {
          off();
          sharedRunner.writing(null);
          await writer.stop();
        },
      };
    });
  }
  opened.add(() => projections.stop());
  await projections.start();
  log(
    `[weir] read models at log position ${projections.position() ?? 'start'} after ${Math.round(performance.now() - started)} ms${sharedRunner ? ' (shared: written by the owner of the projections work)' : ''}`,
  );

  const mailer = overrides.mailer
    ? { ...overrides.mailer, describe: 'custom', close: () => {} }
    : openMailer({ smtpUrl: config.smtpUrl, outboxDir: join(config.dataDir, 'outbox') });
  opened.add(() => mailer.close());
  const webhookTargets = webhookTargetPolicy(config.webhookInternalTargets);
  const httpSender = overrides.webhookSender
    ? null
    : createHttpWebhookSender({ targets: webhookTargets, tokenHeader: config.webhookTokenHeader !== false });
  if (httpSender) opened.add(() => httpSender.close());
  // Each kind of background work runs in one instance at a time (the holder of its lease, with
  // NATS; always this one without): created anew at each acquisition, stopped when the lease moves.
  // The followers running here (none on an instance that does not own a network's follower).
  const followers: RailFollower[] = [];
  const followersByNetwork = new Map<string, RailFollower>();
  // The timer runner while this instance owns the timers (followers and matcher wake it).
  let timers: TimerRunner | null = null;
  const mails = { clock, readStore, projections, mailer, log };
  // Created before the matcher, started after it: a session's expiry and an invoice reminder also
  // wait for the matcher to handle what the followers published, and it wakes the waiting timers.
  const gate = createChainReadGate({
    clock,
    log,
    readThrough: (network) => followersByNetwork.get(network)?.status(),
    matcherDrained: (networks) => matcher.drained(networks),
    maxWaitMs: (config.chainWaitMaxSeconds ?? DEFAULT_CHAIN_WAIT_MAX_SECONDS) * 1000,
  });
  // On every instance: with NATS each network's matcher is one durable consumer that hands out one message at a time.
  const matcher = createMatcher({
    bus,
    intents: createPaymentIntents({ readStore, commands, projections, eventStore }),
    clock,
    networks: everyNetwork(rail).map((n) => n.network),
    log: (line) => log(`[matcher] ${line}`),
    onHandled: () => timers?.retryWaiting(),
    metrics,
  });
  await matcher.start();
  opened.add(() => matcher.stop());
  // The owned work (started from here on) stops first: it uses everything opened before.
  opened.add(() => ownership.stop());
  // Each rail's follower of a network runs where that network's lease is held, built anew by the rail
  // at each acquisition; `evmFollowers: false` (`tronFollowers: false`) leaves the EVM (Tron) rail's out.
  // Before the timers: an expiry waits for the follower of its network running here (see chain-read-gate).
  const followerOff = (r: Rail) =>
    (overrides.evmFollowers === false && r.name === 'evm') || (overrides.tronFollowers === false && r.name === 'tron');
  for (const followed of rails.filter((r) => r.followers && !followerOff(r))) {
    for (const { network } of everyNetwork(followed)) {
      await ownership.own(`follower.${network}`, async (fence) => {
        const scope = shared.scoped();
        const built =
          followed.followers?.({
            bus,
            watched,
            watchedCurrent,
            clock,
            dataDir: config.dataDir,
            metrics: scope,
            network,
            // Shared through NATS, so the next owner resumes where this one got to.
            checkpoints: (own) => owning.sharedCheckpoints?.(fence, own) ?? own,
            // A session's expiry and an invoice reminder wait for the followers to read past them (see chain-read-gate).
            onCaughtUp: () => timers?.retryWaiting(),
            ...(tracing ? { tracer } : {}),
            ...(overrides.followerPollIntervalMs === undefined
              ? {}
              : { pollIntervalMs: overrides.followerPollIntervalMs }),
            log,
          }) ?? [];
        for (const follower of built) {
          await follower.start();
          followers.push(follower);
          followersByNetwork.set(follower.status().network, follower);
        }
        return {
          async stop() {
            for (const follower of built) {
              followers.splice(followers.indexOf(follower), 1);
              const name = follower.status().network;
              if (followersByNetwork.get(name) === follower) followersByNetwork.delete(name);
            }
            scope.close();
            await Promise.all(built.map((follower) => follower.stop()));
          },
        };
      });
    }
  }
  // Webhook bodies show sessions as the API does, network icons at the public URL: known at once
  // unless the system picks the port, then once listening.
  const presenting = presentersOnceKnown(
    (publicUrl) => ({
      checkoutSession: sessionPresenter({ rail, publicUrl }),
      paymentIntent: paymentIntentPresenter({ rail, publicUrl }),
    }),
    config.publicUrl !== undefined || config.port !== 0 ? publicUrlOf(config, config.port) : null,
  );
  let dispatcher: WebhookDispatcher | null = null;
  await ownership.own('webhooks', async (fence) => {
    const scope = shared.scoped();
    const running = createWebhookDispatcher({
      clock,
      eventStore,
      readStore,
      projections,
      commands: fencedCommands(commands, fence),
      secretBox,
      send: fencedWebhookSender(tracedWebhookSender(overrides.webhookSender ?? httpSender!, tracer), fence),
      present: presenting.present,
      log,
      metrics: scope,
    });
    await running.start();
    dispatcher = running;
    return {
      async stop() {
        dispatcher = null;
        scope.close();
        await running.stop();
      },
    };
  });
  await ownership.own('timers', async (fence) => {
    const scope = shared.scoped();
    const owned = fencedCommands(commands, fence);
    const runner = createTimerRunner({
      clock,
      readStore,
      projections,
      log,
      metrics: scope,
      handlers: {
        ...checkoutSessionTimerHandlers(owned, { readStore, gate }),
        ...invoiceTimerHandlers(owned, { readStore, gate }),
        ...couponTimerHandlers(owned),
        ...subscriptionTimerHandlers(owned, { readStore, gate }),
        // A mail's retry is a timer: sent by the timers' owner (the dispatcher below is never started).
        ...createMailDispatcher({ ...mails, commands: owned, mailer: fencedMailer(mailer, fence) }).timerHandlers,
      },
    });
    runner.start();
    timers = runner;
    return {
      async stop() {
        timers = null;
        scope.close();
        await runner.stop();
      },
    };
  });
  await ownership.own(
    'mail',
    componentWork((fence) =>
      createMailDispatcher({
        ...mails,
        commands: fencedCommands(commands, fence),
        mailer: fencedMailer(mailer, fence),
      }),
    ),
  );

  const executors = new Map(rails.flatMap((r) => [...(r.sweepExecutors?.() ?? [])]));
  // No session before each follower running here has a starting point that survives a crash (see `ready`):
  // otherwise a payer could pay in a block that a follower started later will never read. A chain
  // that does not answer does not keep Weir down; what is paid before its first look needs recovery.
  await Promise.all(
    [...followersByNetwork].map(async ([network, follower]) => {
      if ('timedOut' in (await settleWithin(follower.ready(), FOLLOWER_READY_TIMEOUT_MS))) {
        log(
          `[ingest ${network}] no chain head within ${FOLLOWER_READY_TIMEOUT_MS / 1000} s: following from the first head it reads; a payment made before that needs POST /api/v1/checkout/sessions/auto-recover-by-transaction-hash`,
        );
      }
    }),
  );

  const unswept = rails
    .filter((rail) => rail.sweepExecutors)
    .flatMap((rail) => [...rail.networks('test'), ...rail.networks('live')])
    .filter((network) => !executors.has(network.network));
  if (unswept.length > 0)
    log(
      `[sweeper] no WEIR_SWEEPER_KEY: deposits on ${unswept.map((n) => n.name).join(', ')} are not swept until one is set (anyone may flush a deposit to its wallet: nothing is lost)`,
      { level: 'warn', event: 'sweeper.no_key' },
    );
  // One sweeper per network: its transactions' nonces are the sweeper key's on that chain alone.
  for (const [network, executor] of executors) {
    await ownership.own(`sweeper.${network}`, async (fence) => {
      const scope = shared.scoped();
      const sweeper = createSweeper({
        clock,
        readStore,
        projections,
        commands: fencedCommands(commands, fence),
        executors: new Map([[network, fencedSweepExecutor(tracedSweepExecutor(executor, network, tracer), fence)]]),
        batchDelayMs: overrides.sweepBatchDelayMs,
        log: (line) => log(`[sweeper] ${line}`),
        metrics: scope,
      });
      sweeper.start();
      return {
        async stop() {
          scope.close();
          await sweeper.stop();
        },
      };
    });
  }

  const server: Server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // Once listening, a server error (EMFILE on accept) is logged: the process goes on serving.
  server.on('error', (error) =>
    logger.error({ event: 'http.server_error', err: error }, `HTTP server: ${error.message}`),
  );
  opened.add(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  const port = (server.address() as AddressInfo).port;
  const url = listenUrlOf(config.host, port);
  const publicUrl = publicUrlOf(config, port);
  presenting.listening(publicUrl);
  const lineItems = createLineItemResolver({ readStore, commands, rail });
  const gasFees =
    overrides.gasFees ??
    createEvmGasFeeQuoter({
      registry: evm.registry,
      clock,
      nativePrices: parseNativePrices(config.chainEnv ?? {}),
    });
  const createCheckoutSession = createCheckoutSessionCreator({
    clock,
    readStore,
    commands,
    rail,
    lineItems,
    publicUrl,
    gasFees,
  });
  const transactionRecovery = combinedRecovery(rails, {
    bus,
    reads: createRecoveryReads({ readStore, projections, eventStore }),
    clock,
    followers: followersByNetwork,
    log: (line) => log(`[recovery] ${line}`),
  });
  const health = createHealth({
    clock,
    eventStore,
    projections,
    readStore,
    matcher,
    bus,
    // The timers' health where they run; elsewhere nothing failing here.
    timers: { status: () => timers?.status() ?? { failing: [] } },
    followers,
  });
  const setupTokenFile = join(config.dataDir, SETUP_TOKEN_FILE);
  const dashboardSetup = createSetupToken(setupTokenFile);
  // The token dies with this process: its file would only mislead.
  opened.add(() => dashboardSetup.spend());
  const dashboard = (api: ApiBridge) =>
    createDashboard(
      {
        api,
        clock,
        eventStore,
        readStore,
        commands,
        projections,
        rail,
        secretBox,
        publicUrl,
        transactionRecovery,
        webhookTargets,
        sessions: createDashboardSessions({
          commands,
          readStore,
          projections,
          clock,
          limits: overrides.dashboard?.sessionLimits,
        }),
        // Its own key, derived from the master key: forms outlive a restart, and no other use shares it.
        csrf: createCsrf(Buffer.from(hkdfSync('sha256', masterKey, '', 'weir dashboard csrf', 32))),
        signInThrottle: createSignInThrottle({ clock, limits: overrides.dashboard?.signInLimits }),
        setup: dashboardSetup,
        events: createDashboardEvents({ projections, readStore }),
      },
      overrides.dashboard?.extraPages,
    );
  const requestTracing = tracing ? (await import('../read-api/http-tracing.ts')).httpTracingMiddleware(tracer) : null;
  const app = createApiApp({
    dashboard,
    chainProgress: (network) => {
      const follower = followersByNetwork.get(network);
      return follower ? { head: follower.status().head, required: follower.confirmations } : null;
    },
    clock,
    eventStore,
    readStore,
    commands,
    projections,
    rail,
    secretBox,
    publicUrl,
    // Only a URL the operator set: the listening address may be one no client reaches (behind a proxy).
    ...(config.publicUrl === undefined ? {} : { documentServerUrl: publicUrl }),
    ...(overrides.openApiDocuments === undefined ? {} : { openApiDocuments: overrides.openApiDocuments }),
    createCheckoutSession,
    mailer,
    adminToken: config.adminToken,
    devnet: evm.devnet,
    tronDevnet: offeredTron?.devnet ?? null,
    transactionRecovery,
    ...(solana.payTransactions ? { solanaPay: solana.payTransactions } : {}),
    health,
    webhookTargets,
    auditKeys: [operatorKey.publicKey],
    rateLimits: rateLimitsOf(config),
    trustProxy: config.trustProxy ?? false,
    logger,
    metrics,
    ...(requestTracing ? { requestTracing } : {}),
    metricsEndpoint: {
      scrape: metrics.scrape,
      contentType: metrics.contentType,
      access: metricsAccess({ host: config.host, trustProxy: config.trustProxy }),
    },
  });
  const handle = app.callback();
  server.on('request', handle);
  server.on('checkContinue', continueWhenRead(handle));
  server.keepAliveTimeout = 65_000;
  // Only once requests are handled: one that came in before would wait unanswered.
  if (config.auditCheckpointSeconds) {
    const every = config.auditCheckpointSeconds * 1000;
    await ownership.own('audit-checkpoints', async (fence) => {
      const stop = scheduleCheckpoints({
        eventStore: fencedAppends(eventStore, fence),
        key: operatorKey,
        clock,
        intervalMs: every,
        log,
        onWritten: (checkpoint) =>
          logger.info(
            { event: 'audit.checkpoint', ...checkpoint },
            `signed checkpoint of the log at position ${checkpoint.position}`,
          ),
      });
      return { stop };
    });
  }
  // After the server listens: effects link to hosted pages at the public address.
  const workflows = await ownWorkflows(ownership, {
    eventStore,
    readStore,
    commands,
    clock,
    log,
    publicUrl,
    rail,
    ...(tracing ? { tracer } : {}),
  });
  // No dashboard user yet: the first owner is made on the first-run page, with a token kept in a file only
  // the data dir's owner reads; the log names the file, never the token (logs travel further than the data dir).
  const setupToken = (await readStore.collection(USERS).count({})) === 0 ? dashboardSetup.issue() : null;
  if (setupToken)
    logger.warn(
      { event: 'dashboard.setup', setupTokenFile },
      `no dashboard user yet: open ${publicUrl}/dashboard/setup and enter the one-time setup token in ${setupTokenFile} to create the first owner (or use weir user create)`,
    );
  else dashboardSetup.spend();
  logger.info(
    {
      event: 'weir.started',
      version: VERSION,
      dataDir: config.dataDir,
      port,
      url,
      publicUrl,
      networks: everyNetwork(rail).map((n) => n.network),
      eventStore: config.kurrentDbUrl ? 'KurrentDB' : 'SQLite',
      bus: config.natsUrl ? 'NATS' : 'in-process',
      readStore: config.mongoDbUrl ? 'MongoDB' : 'embedded',
    },
    `weir ${VERSION} listening on ${url}`,
  );

  let stopping: Promise<void> | null = null;
  return {
    url,
    publicUrl,
    port,
    clock,
    eventStore,
    readStore,
    bus,
    commands,
    projections,
    workflows,
    webhooks: { status: () => dispatcher?.status() ?? { queued: 0, inFlight: 0, awaitingReadModel: 0 } },
    dashboardSetupToken: setupToken,
    inspectorPage: inspector?.page && credential ? { page: inspector.page, credential } : null,
    stop(reason) {
      stopping ??= (async () => {
        const stopStarted = performance.now();
        logger.info(
          { event: 'weir.stopping', version: VERSION, dataDir: config.dataDir, port, reason },
          reason ? `${reason}: stopping` : 'stopping',
        );
        // The server closes, every owned work stops and lets its lease go (other instances take it over
        // at once), then what they used closes.
        await opened.close();
        await releaseLock();
        logger.info(
          {
            event: 'weir.stopped',
            version: VERSION,
            dataDir: config.dataDir,
            port,
            ms: Math.round(performance.now() - stopStarted),
          },
          'stopped',
        );
      })();
      return stopping;
    },
  };
}
