/**
 * `weir audit verify` on a big log, beside the same log's `weir replay`: how much the auditor's
 * check costs next to a plain rebuild of the read models.
 *
 *   node --import tsx bench/audit-verify.ts [--events 100000] [--checkpoint-every 10000] [--reuse DIR] [--keep] [--json FILE]
 *   (npm run bench:audit)
 *
 * 1. Writes a realistic log of about `--events` events through the command handlers
 *    (bench/support/realistic-log.ts), with a signed checkpoint every `--checkpoint-every` events
 *    and one at the end. `--reuse DIR` skips this and uses DIR/events.sqlite3 (and its key).
 * 2. `weir replay --data-dir DIR` (the CLI): its rebuild time.
 * 3. In a fresh process: the live read models are built as `weir serve` builds them at start (not
 *    timed), then `verifyAudit` runs whole, as `GET /api/v1/audit/verify` and `weir audit verify`
 *    on MongoDB do: the chain and every checkpoint, then every read model rebuilt in a scratch store
 *    and compared document by document with the live one. Wall and CPU time per phase, peak RSS.
 * 4. `weir audit verify --data-dir DIR` (the CLI on the embedded store: the chain and checkpoints).
 *
 * Target: verify (3) at most 2x the replay (2). Prints a JSON summary and a Markdown table. Not a test.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { verifyAudit, type AuditProgress } from '../src/audit/audit-verify.ts';
import { writeCheckpoint, type LoggedCheckpoint } from '../src/audit/checkpoints.ts';
import { OPERATOR_KEY_FILE, loadOperatorKey } from '../src/audit/operator-key.ts';
import { SQLITE_EVENT_STORE_FILE } from '../src/event-store/open-event-store.ts';
import { createSqliteEventStore } from '../src/event-store/sqlite-event-store.ts';
import { ALL_PROJECTIONS, INDEXED_FIELDS } from '../src/projections/all-projections.ts';
import { createProjectionRunner } from '../src/projections/projection-runner.ts';
import { createEmbeddedReadStore } from '../src/read-store/embedded-read-store.ts';
import { createSystemClock } from '../src/shared/clock.ts';
import { cliArgs } from './support/cli-args.ts';
import { writeRealisticLog } from './support/realistic-log.ts';
import type { ReplayMeasurement } from './replay-measure.ts';
import { report } from './support/report.ts';

const run = promisify(execFile);
const TARGET_RATIO = 2;

type VerifyMeasurement = {
  events: number;
  holds: boolean;
  checkpoints: number;
  documents: number;
  ms: { total: number; chain: number; rebuild: number; compare: number; liveBuild: number };
  /** This process's CPU time (user + system) per phase: what other load on the machine skews least. */
  cpuMs: { total: number; chain: number; rebuild: number; compare: number };
  maxRssMiB: number;
};

const mib = (bytes: number) => Math.round(bytes / 2 ** 20);

const lastJsonLine = <T>(stdout: string): T => {
  const line = stdout
    .trim()
    .split('\n')
    .reverse()
    .find((l) => l.startsWith('{'));
  if (!line) throw new Error(`no JSON line in output:\n${stdout}`);
  return JSON.parse(line) as T;
};

/** Step 3, in its own process: prints one JSON line. */
async function measure(dataDir: string): Promise<void> {
  const eventStore = createSqliteEventStore({ path: join(dataDir, SQLITE_EVENT_STORE_FILE) });
  const key = loadOperatorKey({ keyFile: join(dataDir, OPERATOR_KEY_FILE) });
  const live = createEmbeddedReadStore({ indexedFields: INDEXED_FIELDS, writes: 'trusted' });
  const runner = createProjectionRunner({ eventStore, readStore: live, projections: ALL_PROJECTIONS, log: () => {} });
  const liveStarted = performance.now();
  await runner.start();
  const liveBuild = performance.now() - liveStarted;

  const marks = new Map<string, { at: number; cpu: number }>();
  const cpuNow = () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  };
  const mark = (progress: AuditProgress) => {
    if (!marks.has(progress.phase)) marks.set(progress.phase, { at: performance.now(), cpu: cpuNow() });
  };
  const cpuStart = cpuNow();
  const started = performance.now();
  const result = await verifyAudit({
    eventStore,
    trustedKeys: [key.publicKey],
    live: { readStore: live, position: async () => runner.position() },
    onProgress: mark,
  });
  const end = { at: performance.now(), cpu: cpuNow() };
  const ended = end.at;
  const rebuild = marks.get('rebuild') ?? end;
  const compare = marks.get('compare') ?? end;
  const rebuildAt = rebuild.at;
  const compareAt = compare.at;
  const measurement: VerifyMeasurement = {
    events: result.chain.events,
    holds: result.holds,
    checkpoints: result.chain.checkpoints.checked,
    documents: result.readModels.documents,
    ms: {
      total: Math.round(ended - started),
      chain: Math.round(rebuildAt - started),
      rebuild: Math.round(compareAt - rebuildAt),
      compare: Math.round(ended - compareAt),
      liveBuild: Math.round(liveBuild),
    },
    cpuMs: {
      total: Math.round(end.cpu - cpuStart),
      chain: Math.round(rebuild.cpu - cpuStart),
      rebuild: Math.round(compare.cpu - rebuild.cpu),
      compare: Math.round(end.cpu - compare.cpu),
    },
    maxRssMiB: mib(process.resourceUsage().maxRSS * 1024),
  };
  if (!result.holds)
    process.stderr.write(
      `${JSON.stringify({ chain: result.chain.problems, readModels: result.readModels.differences })}\n`,
    );
  await runner.stop();
  await eventStore.close();
  console.log(JSON.stringify(measurement));
}

async function main(argv: string[]): Promise<void> {
  const { value, integer, flag } = cliArgs(argv);
  const measureDir = value('--measure');
  if (measureDir) return measure(measureDir);
  const events = integer('--events', 100_000, 5_000_000);
  const checkpointEvery = integer('--checkpoint-every', 10_000, 5_000_000);
  const reuse = value('--reuse') ?? null;
  const keep = flag('--keep');
  const jsonOut = value('--json') ?? null;
  const dataDir = reuse ?? (await mkdtemp(join(tmpdir(), 'weir-bench-audit-')));
  const dbPath = join(dataDir, SQLITE_EVENT_STORE_FILE);
  const log = (line: string) => process.stderr.write(`[bench:audit] ${line}\n`);
  let generation: { events: number; ms: number; appendsPerSecond: number; checkpoints: number } | null = null;
  try {
    if (reuse === null) {
      log(`writing about ${events.toLocaleString('en-US')} events into ${dbPath} through the command handlers ...`);
      const eventStore = createSqliteEventStore({ path: dbPath });
      const key = loadOperatorKey({ keyFile: join(dataDir, OPERATOR_KEY_FILE) });
      const clock = createSystemClock();
      const checkpoints: Promise<LoggedCheckpoint | null>[] = [];
      let lastCheckpoint = 0;
      const started = performance.now();
      const summary = await writeRealisticLog({
        eventStore,
        targetEvents: events,
        onProgress: (written) => {
          if (written - lastCheckpoint < checkpointEvery) return;
          lastCheckpoint = written;
          checkpoints.push(writeCheckpoint({ eventStore, key, clock }));
          log(`  ${written.toLocaleString('en-US')} events, checkpoint`);
        },
      });
      const ms = performance.now() - started;
      checkpoints.push(writeCheckpoint({ eventStore, key, clock }));
      const written = (await Promise.all(checkpoints)).filter((c) => c !== null).length;
      await eventStore.close();
      generation = {
        events: summary.events,
        ms: Math.round(ms),
        appendsPerSecond: Math.round(summary.events / (ms / 1000)),
        checkpoints: written,
      };
      log(
        `wrote ${summary.events.toLocaleString('en-US')} events and ${written} checkpoints in ${(ms / 1000).toFixed(1)} s`,
      );
    } else if (!existsSync(dbPath)) {
      throw new Error(`--reuse ${dataDir}: ${dbPath} does not exist`);
    }
    const fileMiB = +((await stat(dbPath)).size / 2 ** 20).toFixed(1);
    const loadBefore = +loadavg()[0]!.toFixed(2);
    const cli = fileURLToPath(new URL('../bin/weir.js', import.meta.url));
    const env = { ...process.env, MONGODB_URL: '', KURRENTDB_URL: '' };

    const replayStarted = performance.now();
    // --json: the report, pretty-printed, is the whole of stdout.
    const replay = JSON.parse(
      (await run(process.execPath, [cli, 'replay', '--json', '--data-dir', dataDir], { maxBuffer: 16 * 2 ** 20, env }))
        .stdout,
    ) as { events: number; seconds: number; eventsPerSecond: number };
    const replayProcessMs = Math.round(performance.now() - replayStarted);
    log(`weir replay: ${replay.seconds} s (${replay.eventsPerSecond.toLocaleString('en-US')} events/s)`);

    // The same rebuild in a process of its own, for its CPU time (the CLI reports wall time only).
    const replayCpu = lastJsonLine<ReplayMeasurement>(
      (
        await run(
          process.execPath,
          [
            '--import',
            'tsx',
            fileURLToPath(new URL('./replay-measure.ts', import.meta.url)),
            dbPath,
            '--skip-read-all',
          ],
          { maxBuffer: 16 * 2 ** 20 },
        )
      ).stdout,
    ).rebuild;
    log(`rebuild (bench/replay-measure.ts): ${replayCpu.ms} ms, CPU ${replayCpu.cpuMs} ms`);

    const self = fileURLToPath(import.meta.url);
    const verify = lastJsonLine<VerifyMeasurement>(
      (await run(process.execPath, ['--import', 'tsx', self, '--measure', dataDir], { maxBuffer: 16 * 2 ** 20 }))
        .stdout,
    );
    log(
      `verify: ${verify.ms.total} ms (chain ${verify.ms.chain}, rebuild ${verify.ms.rebuild}, compare ${verify.ms.compare}), holds: ${verify.holds}`,
    );

    const cliStarted = performance.now();
    const cliVerify = await run(process.execPath, [cli, 'audit', 'verify', '--data-dir', dataDir], {
      maxBuffer: 16 * 2 ** 20,
      env,
    }).then(
      () => ({ exitCode: 0 }),
      (error: { code?: number }) => ({ exitCode: error.code ?? 1 }),
    );
    const cliVerifyMs = Math.round(performance.now() - cliStarted);

    const replayMs = Math.round(replay.seconds * 1000);
    const ratio = +(verify.ms.total / replayMs).toFixed(2);
    const cpuRatio = +(verify.cpuMs.total / replayCpu.cpuMs).toFixed(2);
    const summary = {
      date: new Date().toISOString(),
      node: process.version,
      log: { path: keep || reuse ? dbPath : '(temporary, removed)', events: verify.events, fileMiB, generation },
      replay: { ...replay, ms: replayMs, processMs: replayProcessMs, measured: replayCpu },
      verify,
      cliVerify: {
        ...cliVerify,
        processMs: cliVerifyMs,
        what: 'chain and checkpoints (embedded read store: not compared)',
      },
      ratio,
      cpuRatio,
      loadAverage: { before: loadBefore, after: +loadavg()[0]!.toFixed(2) },
      target: { ratio: TARGET_RATIO, met: verify.holds && ratio <= TARGET_RATIO },
    };
    const fmt = (n: number) => n.toLocaleString('en-US');
    const table = [
      '| Measurement | events | wall time | CPU time | notes |',
      '|---|---:|---:|---:|---|',
      `| \`weir replay\` (CLI): rebuild of every read model | ${fmt(replay.events)} | ${fmt(replayMs)} ms | - | process ${fmt(replayProcessMs)} ms |`,
      `| the same rebuild (bench/replay-measure.ts) | ${fmt(replay.events)} | ${fmt(replayCpu.ms)} ms | ${fmt(replayCpu.cpuMs)} ms | |`,
      `| verify, whole (\`verifyAudit\`, as GET /audit/verify and the CLI on MongoDB) | ${fmt(verify.events)} | **${fmt(verify.ms.total)} ms** | **${fmt(verify.cpuMs.total)} ms** | ${verify.holds ? 'holds' : 'DOES NOT HOLD'}; peak RSS ${verify.maxRssMiB} MiB |`,
      `| - hash chain and ${verify.checkpoints} checkpoints | | ${fmt(verify.ms.chain)} ms | ${fmt(verify.cpuMs.chain)} ms | |`,
      `| - read models rebuilt in a scratch store | | ${fmt(verify.ms.rebuild)} ms | ${fmt(verify.cpuMs.rebuild)} ms | |`,
      `| - ${fmt(verify.documents)} documents compared with the live ones | | ${fmt(verify.ms.compare)} ms | ${fmt(verify.cpuMs.compare)} ms | |`,
      `| \`weir audit verify\` (CLI, embedded: chain and checkpoints) | | ${fmt(cliVerifyMs)} ms (process) | | exit ${cliVerify.exitCode} |`,
    ].join('\n');
    await report(
      summary,
      table,
      [
        `Target verify <= ${TARGET_RATIO}x replay: ${ratio}x wall (CLI replay), ${cpuRatio}x CPU -> ${summary.target.met ? 'met' : 'MISSED'}`,
      ],
      jsonOut,
    );
  } finally {
    if (reuse === null && !keep) await rm(dataDir, { recursive: true, force: true });
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
