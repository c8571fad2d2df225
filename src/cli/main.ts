import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigError, readConfig } from '../app/config.ts';
import {
  DataDirInUseError,
  lockDataDir,
  PRIVATE_UMASK,
  prepareDataDir,
  UnfinishedRestoreError,
} from '../app/data-dir.ts';
import { SettingError } from '../shared/setting-error.ts';
import { BackupCheckError } from './backup-check-error.ts';
import { checkHealth, healthUrlProblem } from './check-health.ts';
import { argumentProblem, readArguments } from './command-arguments.ts';
import { option } from './option-values.ts';
import { COMMAND_ARGUMENTS, USAGE } from './usage.ts';
import { PortInUseError, systemProblem } from './system-problem.ts';

// Each command loads what it needs when it runs, so a small one (`weir health`, run by a
// container's health check every few seconds) does not load the whole server.

/** Commands that write into the data dir create what they write (and SQLite its files) for the owner alone. */
function privateFiles(): void {
  process.umask(PRIVATE_UMASK);
}

async function serve(argv: string[]): Promise<void> {
  const config = readConfig(argv, process.env);
  privateFiles();
  const { startWeir } = await import('../app/start-weir.ts');
  const weir = await startWeir(config);
  // A person at a terminal gets the first-run token on screen; a collected log only names its file.
  if (weir.dashboardSetupToken && process.stderr.isTTY)
    process.stderr.write(
      `\n  Dashboard first run: open ${weir.publicUrl}/dashboard/setup and enter ${weir.dashboardSetupToken}\n\n`,
    );
  // Likewise the inspector's page, with its token where the terminal may be shown it (the log says which token).
  if (weir.inspectorPage && process.stderr.isTTY) {
    const { bridgeInvitation } = await import('../inspect/inspector.ts');
    const { page, credential } = weir.inspectorPage;
    process.stderr.write(`\n  Statecharts live: open ${bridgeInvitation(page, credential, true)}\n\n`);
  }
  const shutdown = (signal: string) => {
    weir.stop(signal).then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
}

async function orgCreate(argv: string[]): Promise<void> {
  const name = option(argv, '--name');
  if (!name || name.trim() === '' || name.length > 200)
    throw new ConfigError('org create needs --name NAME (1 to 200 characters)');
  const config = readConfig(argv, process.env);
  privateFiles();
  // Made in a new log, the keys answer 401 on a weir serve of another data dir: said, so a mistyped --data-dir shows.
  const { SQLITE_EVENT_STORE_FILE } = await import('../event-store/open-event-store.ts');
  const log = config.kurrentDbUrl ? null : (config.eventStoreFile ?? join(config.dataDir, SQLITE_EVENT_STORE_FILE));
  const newLog = log !== null && !existsSync(log);
  if (!config.kurrentDbUrl) await prepareDataDir(config.dataDir, (line) => console.error(line));
  const { createCommandHandler } = await import('../actors/command-handler.ts');
  const { createOrganization } = await import('../tenancy/create-organization.ts');
  const { createSystemClock } = await import('../shared/clock.ts');
  const eventStore = await openCommandLog(config);
  try {
    const created = await createOrganization(
      createCommandHandler({ eventStore, clock: createSystemClock() }),
      name.trim(),
    );
    process.stdout.write(
      `${JSON.stringify(
        {
          organizationId: created.organizationId,
          name: created.name,
          testSecretKey: created.keys.test.secretKey,
          liveSecretKey: created.keys.live.secretKey,
          keys: [
            { id: created.keys.test.id, environment: 'test', secretKey: created.keys.test.secretKey },
            { id: created.keys.live.id, environment: 'live', secretKey: created.keys.live.secretKey },
          ],
        },
        null,
        2,
      )}\n`,
    );
    if (newLog)
      console.error(
        `weir: org create: no log at ${log} yet, so a new one was started there: only a weir serve on that data dir knows this organization (check --data-dir if yours runs on another)`,
      );
  } finally {
    await eventStore.close();
  }
}

async function userCreate(argv: string[]): Promise<void> {
  const organizationId = option(argv, '--org');
  const email = option(argv, '--email');
  const role = option(argv, '--role');
  if (!organizationId || !email || !role)
    throw new ConfigError('user create needs --org ID --email EMAIL --role owner|admin|developer|viewer');
  const { readNewPassword } = await import('./read-password.ts');
  const password = await readNewPassword({ stdin: argv.includes('--password-stdin'), env: process.env });
  const { checkNewUser, createUser } = await import('../tenancy/create-user.ts');
  const { WeirError } = await import('../shared/errors.ts');
  const name = option(argv, '--name') ?? null;
  const fail = (error: unknown): never => {
    if (error instanceof WeirError) throw new ConfigError(`user create: ${error.message}`);
    throw error;
  };
  try {
    // Checked before anything is opened, so a bad field never touches the data dir.
    checkNewUser({ email, role, password, name });
  } catch (error) {
    fail(error);
  }
  const config = readConfig(argv, process.env);
  privateFiles();
  if (!config.kurrentDbUrl) await prepareDataDir(config.dataDir, (line) => console.error(line));
  const { createCommandHandler } = await import('../actors/command-handler.ts');
  const { createSystemClock } = await import('../shared/clock.ts');
  const eventStore = await openCommandLog(config);
  try {
    const commands = createCommandHandler({ eventStore, clock: createSystemClock() });
    const { userId } = await createUser(commands, { organizationId, email, role, password, name, actor: 'cli' }).catch(
      fail,
    );
    process.stdout.write(`${JSON.stringify({ userId, organizationId, email: email.trim(), role }, null, 2)}\n`);
  } finally {
    await eventStore.close();
  }
}

/**
 * The event log alone, for commands that only append: the read models are the running server's
 * to write (it projects what the command appended), so a command never opens them beside it.
 */
async function openCommandLog(config: ReturnType<typeof readConfig>) {
  const { openEventLog } = await import('../app/open-event-log.ts');
  return openEventLog(config);
}

async function replay(argv: string[]): Promise<void> {
  const config = readConfig(argv, process.env);
  privateFiles();
  if (!config.kurrentDbUrl) {
    // A mistyped data dir is an error, not a new empty log replayed "OK" (and a stray data dir left behind).
    const { existingLogFile } = await import('./existing-log-file.ts');
    existingLogFile(config, 'replay');
    await prepareDataDir(config.dataDir, (line) => console.error(line));
  }
  const { openStores } = await import('../app/open-stores.ts');
  const { ALL_PROJECTIONS } = await import('../projections/all-projections.ts');
  const { createProjectionRunner } = await import('../projections/projection-runner.ts');
  const { documentCounts, replaySummaryOf, replayTally } = await import('./replay.ts');
  const { SingleBar } = await import('cli-progress');
  // The embedded read models are the data dir's: not rebuilt under a running weir serve.
  const release = config.mongoDbUrl ? null : await lockDataDir(config.dataDir, (line) => console.error(line), 'replay');
  const { eventStore, readStore } = await openStores(config).catch(async (error: unknown) => {
    await release?.();
    throw error;
  });
  const tally = replayTally();
  const runner = createProjectionRunner({ eventStore, readStore, projections: [...ALL_PROJECTIONS, tally.projection] });
  // A bar on a terminal only: a log or a pipe would keep every frame it draws (as audit verify's progress).
  const bar = process.stderr.isTTY
    ? new SingleBar({
        format: 'replay [{bar}] {percentage}% | {events} events | {eta_formatted} left',
        stream: process.stderr,
      })
    : null;
  if (!bar) console.error('replay: rebuilding the read models from the log');
  let started = false;
  try {
    const result = await runner.rebuild(({ events, position, head }) => {
      const total = head === null ? 1 : Number(head);
      if (!started) {
        bar?.start(total, 0, { events: 0 });
        started = true;
      }
      bar?.update(Math.min(Number(position), total), { events });
    });
    if (started) bar?.stop();
    const perSecond = result.ms > 0 ? Math.round(result.events / (result.ms / 1000)) : result.events;
    const report = {
      events: result.events,
      streams: tally.streams(),
      position: runner.position()?.toString() ?? null,
      seconds: +(result.ms / 1000).toFixed(3),
      eventsPerSecond: perSecond,
      readStore: config.mongoDbUrl ? 'MongoDB' : 'embedded (read-models.sqlite3 in the data dir)',
      types: tally.types(),
      collections: await documentCounts(
        readStore,
        ALL_PROJECTIONS.flatMap((projection) => projection.collections),
      ),
    };
    // As audit verify: the summary for a person on stderr, the report for a program on stdout when asked.
    console.error(replaySummaryOf(report));
    if (argv.includes('--json')) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } finally {
    await readStore.close();
    await eventStore.close();
    await release?.();
  }
}

async function backup(argv: string[]): Promise<void> {
  const out = option(argv, '--out');
  const verify = option(argv, '--verify');
  if (out && verify) throw new ConfigError('backup takes --out DIR (make one) or --verify DIR (check one), not both');
  if (verify) {
    const { backupCheckSummaryOf, checkBackup } = await import('./check-backup.ts');
    const check = checkBackup(resolve(verify));
    console.error(backupCheckSummaryOf(check));
    process.exitCode = check.problems.length === 0 ? 0 : 1;
    return;
  }
  if (!out)
    throw new ConfigError(
      'backup needs --out DIR, a new folder to copy the data dir into (or --verify DIR to check a backup)',
    );
  const config = readConfig(argv, process.env);
  // The log in KurrentDB is not in any file here: a copy of the data dir alone would pass for a backup.
  if (config.kurrentDbUrl)
    throw new ConfigError("backup: the log is in KurrentDB (KURRENTDB_URL): back it up with KurrentDB's own tools");
  privateFiles();
  const { backupDataDir, backupSummaryOf } = await import('./backup.ts');
  const report = await backupDataDir({
    dataDir: config.dataDir,
    eventStoreFile: config.eventStoreFile,
    out: resolve(out),
  });
  console.error(backupSummaryOf(report, config.dataDir));
}

async function restore(argv: string[]): Promise<void> {
  const from = option(argv, '--from');
  if (!from) throw new ConfigError('restore needs --from BACKUP, a folder weir backup --out made');
  const config = readConfig(argv, process.env);
  // The restored log is the data dir's events.sqlite3: a log kept elsewhere would not be the one restored.
  if (config.kurrentDbUrl || config.eventStoreFile)
    throw new ConfigError(
      'restore: the log is not the data dir’s events.sqlite3 (KURRENTDB_URL or WEIR_EVENT_STORE_FILE): restore it with the tools that keep it',
    );
  privateFiles();
  const { restoreDataDir, restoreSummaryOf } = await import('./restore.ts');
  const report = await restoreDataDir({
    from,
    dataDir: config.dataDir,
    force: argv.includes('--force'),
    now: Date.now(),
    log: (line) => console.error(line),
  });
  console.error(restoreSummaryOf(report));
}

async function inspect(argv: string[]): Promise<void> {
  // The id may stand before or after the options (`inspect --step-ms 100 ID`).
  const read = readArguments(argv, COMMAND_ARGUMENTS['inspect']!);
  const id = read.problem === null ? read.positionals[0] : undefined;
  if (read.problem !== null || !id) throw new ConfigError(`inspect needs a record id\n\n${USAGE}`);
  const config = readConfig(read.options, process.env);
  const stepText = option(argv, '--step-ms') ?? '500';
  if (!/^\d{1,6}$/.test(stepText))
    throw new ConfigError(`--step-ms must be a whole number of milliseconds, got ${stepText}`);
  // A mistyped data dir is an error, not a new empty log that holds no such record (and a stray data dir).
  if (!config.kurrentDbUrl) {
    const { existingLogFile } = await import('./existing-log-file.ts');
    existingLogFile(config, 'inspect');
  }
  // The bridge's token file lives in the data dir, the owner's alone.
  privateFiles();
  await prepareDataDir(config.dataDir, (line) => console.error(line));
  // Read only, so beside a running `weir serve` too: the data dir is not locked.
  const { openStores } = await import('../app/open-stores.ts');
  const { findMachineRecord } = await import('../inspect/inspected-records.ts');
  const { bridgeCredential, bridgeInvitation, INSPECTOR_TOKEN_FILE, openInspector } = await import(
    '../inspect/inspector.ts'
  );
  const { replayRecord } = await import('../inspect/machine-inspection.ts');
  const { createLogger } = await import('../shared/logger.ts');
  const { eventStore, readStore } = await openStores(config);
  try {
    const record = await findMachineRecord(eventStore, id);
    if (!record)
      throw new ConfigError(`no session, invoice, subscription, payment link, coupon or webhook delivery ${id}`);
    const credential = bridgeCredential(join(config.dataDir, INSPECTOR_TOKEN_FILE));
    const inspector = await openInspector(config.inspect ?? '8090', {
      logger: createLogger({ level: config.logLevel, pretty: config.logPretty }),
      token: credential.token,
      maxDeferred: record.events.length * 2 + 10,
      showing: 'replay',
    });
    const where = inspector.page
      ? `; open ${bridgeInvitation(inspector.page, credential, process.stderr.isTTY)}`
      : ` to ${inspector.url}`;
    console.error(`[weir] ${record.streamId}: ${record.events.length} events${where}`);
    // Stepped for a person to follow: not before a page is open to follow it (a late page would get it all at once).
    if (inspector.watched) {
      console.error('[weir] the replay starts once the page is open');
      await inspector.watched;
    }
    const step = Number(stepText);
    await replayRecord(inspector.sink, record, () => new Promise((resolve) => setTimeout(resolve, step)));
    console.error('[weir] replayed; Ctrl-C to stop');
    const stop = () => void inspector.stop().then(() => process.exit(0));
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  } finally {
    await readStore.close();
    await eventStore.close();
  }
}

async function auditVerify(argv: string[]): Promise<void> {
  const bundle = option(argv, '--bundle');
  if (bundle !== undefined) {
    const { verifyBundleFile } = await import('./audit.ts');
    return verifyBundleFile(argv, bundle);
  }
  const config = readConfig(argv, process.env);
  privateFiles();
  const { verifyAudit } = await import('../audit/audit-verify.ts');
  const audit = await import('./audit.ts');
  // Options first: a usage error opens nothing.
  const trust = audit.trustedKeysOf(config, argv);
  const given = await audit.givenCheckpointsOf(argv);
  // Read only: verifying neither makes, tightens nor seals anything in the data dir.
  const eventStore = await audit.openLogToAudit(config, 'audit verify');
  const live = await audit.openLiveReadModels(config).catch(async (error: unknown) => {
    await eventStore.close();
    throw error;
  });
  const progress = audit.verifyProgress();
  try {
    const report = await verifyAudit({
      eventStore,
      trustedKeys: trust.keys,
      published: given.flatMap((file) => file.checkpoints),
      live: 'absent' in live ? live : live.live,
      onProgress: (step) => progress.update(step),
    });
    progress.stop();
    console.error(audit.summaryOf(report, { trust, given }));
    if (argv.includes('--json')) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    process.exitCode = report.holds ? 0 : 1;
  } finally {
    progress.stop();
    if (!('absent' in live)) await live.close();
    await eventStore.close();
  }
}

async function auditCheckpoint(argv: string[]): Promise<void> {
  const config = readConfig(argv, process.env);
  privateFiles();
  const write = argv.includes('--write');
  const audit = await import('./audit.ts');
  const { latestCheckpoint, writeCheckpoint } = await import('../audit/checkpoints.ts');
  // --write appends the checkpoint to the log, so opens it to write; printing only reads it. Either
  // way the log must be there: a mistyped data dir is an error, not a new empty log.
  const openToWrite = async () => {
    if (!config.kurrentDbUrl) {
      const { existingLogFile } = await import('./existing-log-file.ts');
      existingLogFile(config, 'audit checkpoint');
      await prepareDataDir(config.dataDir, (line) => console.error(line));
    }
    return openCommandLog(config);
  };
  const eventStore = write ? await openToWrite() : await audit.openLogToAudit(config, 'audit checkpoint');
  try {
    let written = false;
    if (write) {
      const { OPERATOR_KEY_FILE, loadOperatorKey } = await import('../audit/operator-key.ts');
      const { createSystemClock } = await import('../shared/clock.ts');
      const key = loadOperatorKey({ given: config.auditKey, keyFile: join(config.dataDir, OPERATOR_KEY_FILE) });
      written = (await writeCheckpoint({ eventStore, key, clock: createSystemClock() })) !== null;
    }
    const latest = await latestCheckpoint(eventStore);
    // Printed as if just signed, the old checkpoint would pass for a new one.
    if (write && !written && latest !== null)
      console.error(
        `weir audit checkpoint: nothing new since the checkpoint of position ${latest.position} (logged at ${latest.loggedAt ?? '-'}): no checkpoint written`,
      );
    if (latest === null) {
      // Asked to sign, it found nothing to sign: pointing at --write again would send the operator round in a circle.
      console.error(
        write
          ? 'weir audit checkpoint: the log holds no events yet: nothing to sign'
          : 'weir audit checkpoint: the log holds no signed checkpoint yet (weir audit checkpoint --write signs one)',
      );
      process.exitCode = 1;
      return;
    }
    process.stdout.write(`${JSON.stringify(latest, null, 2)}\n`);
  } finally {
    await eventStore.close();
  }
}

async function auditExport(argv: string[]): Promise<void> {
  const config = readConfig(argv, process.env);
  privateFiles();
  const { OPERATOR_KEY_FILE, operatorPublicKey } = await import('../audit/operator-key.ts');
  const { exportBundle, openLogToAudit } = await import('./audit.ts');
  // Read only, as verify reads it: a mistyped data dir is an error, not a new empty log.
  const eventStore = await openLogToAudit(config, 'audit export');
  const own = operatorPublicKey({ given: config.auditKey, keyFile: join(config.dataDir, OPERATOR_KEY_FILE) });
  try {
    await exportBundle({ eventStore, argv, publicKeys: own ? [own] : [], option: (name) => option(argv, name) });
  } finally {
    await eventStore.close();
  }
}

/** A port number option, or `fallback` when not given; a bad value is a ConfigError naming the option. */
function portOption(argv: string[], name: string, fallback: number): number {
  const text = option(argv, name) ?? String(fallback);
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new ConfigError(`${name} must be a port number, got ${text}`);
  return port;
}

/**
 * A chain of `weir devnet` that could not listen on its `port`, said in a line with the option that
 * chooses another; any other failure as it is.
 */
function devnetPortProblem(reason: unknown, option: string, port: number): unknown {
  const e = reason as Partial<NodeJS.ErrnoException> & { reason?: string };
  // anvil runs in its own process and says so in its output (HardhatNodeStartError); the others are listen errors.
  const inUse = e.reason === 'address-in-use' || (e.syscall === 'listen' && e.code === 'EADDRINUSE');
  return inUse ? new PortInUseError(port, '127.0.0.1', option) : reason;
}

async function devnet(argv: string[]): Promise<void> {
  const port = portOption(argv, '--port', 8545);
  const out = option(argv, '--out');
  const { devnetLogger, logDevnetRunning } = await import('./devnet-log.ts');
  // Settings first: a bad log level starts no chain.
  const logger = devnetLogger(argv, process.env);
  const { startDevnet } = await import('../chain-ingest/evm/devnet/start-devnet.ts');
  const { prepareDevnetInfoFile, writeDevnetInfo } = await import('../chain-ingest/evm/devnet/devnet-info.ts');
  const { startLocalSolanaCluster } = await import('../chain-ingest/solana/devnet/local-cluster.ts');
  const { defaultSolanaRpcPort } = await import('../chain-ingest/solana/devnet/rpc-server.ts');
  const { devnetFileTron, startLocalTronDevnet, tronDevnetAddresses } = await import(
    '../chain-ingest/tron/devnet/tron-devnet.ts'
  );
  const solanaPort = portOption(argv, '--solana-port', defaultSolanaRpcPort);
  const tronPort = portOption(argv, '--tron-port', 0);
  if (out) await prepareDevnetInfoFile(resolve(out));
  // The three chains start together. The local Solana (litesvm behind JSON-RPC): Weir offers it with
  // WEIR_RPC_1399811148=<its rpcUrl>; its default port taken (another cluster, a test validator): a free
  // one, as anvil does for 8545. The local Tron (anvil behind the Tron-flavoured proxy) goes in the file.
  const started = await Promise.allSettled([
    startDevnet({ port, node: 'anvil' }),
    startLocalSolanaCluster({ port: solanaPort }).catch((error: unknown) => {
      if (option(argv, '--solana-port') === undefined && (error as { code?: string }).code === 'EADDRINUSE')
        return startLocalSolanaCluster({ port: 0 });
      throw error;
    }),
    startLocalTronDevnet({ port: tronPort }),
  ]);
  const [net, solana, tron] = started.map((result) => (result.status === 'fulfilled' ? result.value : null)) as [
    Awaited<ReturnType<typeof startDevnet>> | null,
    Awaited<ReturnType<typeof startLocalSolanaCluster>> | null,
    Awaited<ReturnType<typeof startLocalTronDevnet>> | null,
  ];
  if (!net || !solana || !tron) {
    // One could not start: the others stop too (anvil runs in its own process group and would outlive us).
    await Promise.all([net?.stop(), solana?.stop(), tron?.stop()]);
    const options = [
      ['--port', port],
      ['--solana-port', solanaPort],
      ['--tron-port', tronPort],
    ] as const;
    const failed = started.findIndex((result) => result.status === 'rejected');
    const [option, chosen] = options[failed]!;
    throw devnetPortProblem((started[failed] as PromiseRejectedResult).reason, option, chosen);
  }
  const info = { ...net.info, tron: devnetFileTron(tron) };
  if (out) await writeDevnetInfo(resolve(out), info);
  process.stdout.write(`${JSON.stringify(info, null, 2)}\n`);
  const tronTokens = tronDevnetAddresses(tron.devnet).tokens;
  logDevnetRunning(logger, {
    evm: { rpcUrl: net.info.rpcUrl, out: out ? resolve(out) : null },
    solana: {
      rpcUrl: solana.rpcUrl,
      wsUrl: solana.info.wsUrl,
      usdc: solana.info.mints.usdc,
      usdt: solana.info.mints.usdt,
      faucet: solana.info.faucet,
    },
    tron: { proxyUrl: tron.proxyUrl, nodeUrl: tron.devnet.rpcUrl, usdt: tronTokens.usdt, usdc: tronTokens.usdc },
  });
  const stop = (signal: string) => {
    logger.info({ event: 'devnet.stopping', signal }, `devnet stopping (${signal})`);
    Promise.all([net.stop(), solana.stop(), tron.stop()]).then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}

async function health(argv: string[]): Promise<void> {
  let url = option(argv, '--url');
  const problem = url === undefined ? null : healthUrlProblem(url);
  if (problem) throw new ConfigError(`health: ${problem}`);
  if (url === undefined) {
    const { host, port } = readConfig(argv, process.env);
    const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
    url = `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
  }
  const result = await checkHealth(url);
  if (result.report) process.stdout.write(`${JSON.stringify(result.report, null, 2)}\n`);
  if (result.problem) console.error(`weir health: ${result.problem}`);
  process.exitCode = result.exitCode;
}

async function main(argv: string[]): Promise<void> {
  const [command, sub, ...rest] = argv;
  // `weir serve --help` asks for help: it must not start a server (on ./data and port 8080) instead.
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(USAGE);
    return;
  }
  const named = command !== undefined && COMMAND_ARGUMENTS[command] ? command : `${command} ${sub}`;
  const takes = COMMAND_ARGUMENTS[named];
  const problem = takes ? argumentProblem(argv.slice(named.split(' ').length), takes) : null;
  if (problem) throw new ConfigError(`${named}: ${problem}`);
  if (command === 'serve') return serve(argv.slice(1));
  if (command === 'org' && sub === 'create') return orgCreate(rest);
  if (command === 'user' && sub === 'create') return userCreate(rest);
  if (command === 'replay') return replay(argv.slice(1));
  if (command === 'backup') return backup(argv.slice(1));
  if (command === 'restore') return restore(argv.slice(1));
  if (command === 'audit' && sub === 'verify') return auditVerify(rest);
  if (command === 'audit' && sub === 'checkpoint') return auditCheckpoint(rest);
  if (command === 'audit' && sub === 'export') return auditExport(rest);
  if (command === 'devnet') return devnet(argv.slice(1));
  if (command === 'health') return health(argv.slice(1));
  if (command === 'inspect') return inspect(argv.slice(1));
  if (command === 'machines' && sub === 'export') {
    const { MACHINES } = await import('../../machines/index.ts');
    const { exportMachines } = await import('./export-machines.ts');
    const files = await exportMachines(MACHINES, option(rest, '--out') ?? './machines-json');
    for (const file of files) console.log(file);
    return;
  }
  if (command === undefined || command === 'help') {
    process.stdout.write(USAGE);
    return;
  }
  throw new ConfigError(`unknown command: ${argv.join(' ')}\n\n${USAGE}`);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof SettingError) {
    console.error(`weir: ${error.message}`);
    process.exit(2);
  }
  const system = systemProblem(error);
  if (system) {
    console.error(`weir: ${system}`);
    process.exit(1);
  }
  if (
    error instanceof DataDirInUseError ||
    error instanceof BackupCheckError ||
    error instanceof UnfinishedRestoreError
  ) {
    console.error(`weir: ${error.message}`);
    process.exit(1);
  }
  console.error(error);
  process.exit(1);
});
