/**
 * Replay throughput: how fast the read models rebuild from the log (what `weir serve` does at
 * every start with the embedded read store, and what `weir replay` does).
 *
 *   node --import tsx bench/replay.ts [--events 100000] [--runs 3] [--reuse DIR] [--keep] [--json FILE]
 *   (npm run bench:replay)
 *
 * 1. Writes a realistic log of about `--events` events into a temporary SQLite event store by
 *    driving the real command handlers (bench/support/realistic-log.ts). `--reuse DIR` skips this
 *    and uses DIR/events.sqlite3; `--keep` leaves the generated data dir in place.
 * 2. `--runs` times, in a fresh child process each (bench/replay-measure.ts): a full `readAll`
 *    pass (raw log read), then `createProjectionRunner({ ALL_PROJECTIONS }).rebuild()` into a fresh
 *    embedded read store, with the child's peak RSS.
 * 3. Once, `weir replay --data-dir DIR` (the CLI) on the same log, as a cross-check.
 *
 * Target: rebuild >= 100,000 events/s. Prints a JSON summary and a Markdown table. Not a test.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { SQLITE_EVENT_STORE_FILE } from '../src/event-store/open-event-store.ts';
import { createSqliteEventStore } from '../src/event-store/sqlite-event-store.ts';
import { ALL_PROJECTIONS, INDEXED_FIELDS } from '../src/projections/all-projections.ts';
import { createEmbeddedReadStore } from '../src/read-store/embedded-read-store.ts';
import type { ReplayMeasurement } from './replay-measure.ts';
import { cliArgs } from './support/cli-args.ts';
import { report } from './support/report.ts';
import { writeRealisticLog, type RealisticLogSummary } from './support/realistic-log.ts';

const run = promisify(execFile);
const TARGET_EVENTS_PER_SECOND = 100_000;

type Settings = { events: number; runs: number; reuse: string | null; keep: boolean; jsonOut: string | null };

function readSettings(argv: string[]): Settings {
  const { value, integer, flag } = cliArgs(argv);
  return {
    events: integer('--events', 100_000, 5_000_000),
    runs: integer('--runs', 3, 20),
    reuse: value('--reuse') ?? null,
    keep: flag('--keep'),
    jsonOut: value('--json') ?? null,
  };
}

const lastJsonLine = <T>(stdout: string): T => {
  const line = stdout
    .trim()
    .split('\n')
    .reverse()
    .find((l) => l.startsWith('{'));
  if (!line) throw new Error(`no JSON line in output:\n${stdout}`);
  return JSON.parse(line) as T;
};

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : Math.round((sorted[middle - 1]! + sorted[middle]!) / 2);
};

async function main(): Promise<void> {
  const settings = readSettings(process.argv.slice(2));
  const dataDir = settings.reuse ?? (await mkdtemp(join(tmpdir(), 'weir-bench-replay-')));
  const dbPath = join(dataDir, SQLITE_EVENT_STORE_FILE);
  let generation: (RealisticLogSummary & { ms: number; appendsPerSecond: number }) | null = null;
  /** Documents per collection as the projections built them live while the log was written. */
  let liveDocuments: Record<string, number> | null = null;
  try {
    if (settings.reuse === null) {
      process.stderr.write(
        `[bench:replay] writing about ${settings.events.toLocaleString('en-US')} events into ${dbPath} through the command handlers ...\n`,
      );
      const eventStore = createSqliteEventStore({ path: dbPath });
      const live = createEmbeddedReadStore({ indexedFields: INDEXED_FIELDS, writes: 'trusted' });
      const started = performance.now();
      let lastReport = 0;
      const summary = await writeRealisticLog({
        eventStore,
        targetEvents: settings.events,
        readStore: live,
        onProgress: (events) => {
          if (events - lastReport >= 10_000) {
            lastReport = events;
            process.stderr.write(`[bench:replay]   ${events.toLocaleString('en-US')} events\n`);
          }
        },
      });
      const ms = performance.now() - started;
      liveDocuments = {};
      for (const name of ALL_PROJECTIONS.flatMap((projection) => projection.collections))
        liveDocuments[name] = await live.collection(name).count({});
      await live.close();
      await eventStore.close();
      generation = { ...summary, ms: Math.round(ms), appendsPerSecond: Math.round(summary.events / (ms / 1000)) };
      process.stderr.write(
        `[bench:replay] wrote ${summary.events.toLocaleString('en-US')} events in ${(ms / 1000).toFixed(1)} s\n`,
      );
    } else if (!existsSync(dbPath)) {
      throw new Error(`--reuse ${dataDir}: ${dbPath} does not exist`);
    }
    const fileMiB = +((await stat(dbPath)).size / 2 ** 20).toFixed(1);

    const loadBefore = +loadavg()[0]!.toFixed(2);
    const measureScript = fileURLToPath(new URL('./replay-measure.ts', import.meta.url));
    const measurements: ReplayMeasurement[] = [];
    for (let i = 0; i < settings.runs; i++) {
      const { stdout } = await run(process.execPath, ['--import', 'tsx', measureScript, dbPath], {
        maxBuffer: 16 * 2 ** 20,
      });
      const measurement = lastJsonLine<ReplayMeasurement>(stdout);
      measurements.push(measurement);
      process.stderr.write(
        `[bench:replay] run ${i + 1}/${settings.runs}: readAll ${measurement.readAll?.eventsPerSecond.toLocaleString('en-US')} events/s, rebuild ${measurement.rebuild.eventsPerSecond.toLocaleString('en-US')} events/s (${measurement.rebuild.ms} ms), peak RSS ${measurement.rssMiB.maxRss} MiB\n`,
      );
    }

    const cliScript = fileURLToPath(new URL('../bin/weir.js', import.meta.url));
    // --json: the report, pretty-printed, is the whole of stdout.
    const cli = JSON.parse(
      (
        await run(process.execPath, [cliScript, 'replay', '--json', '--data-dir', dataDir], {
          maxBuffer: 16 * 2 ** 20,
          env: { ...process.env, MONGODB_URL: '', KURRENTDB_URL: '' },
        })
      ).stdout,
    ) as { events: number; seconds: number; eventsPerSecond: number };
    process.stderr.write(`[bench:replay] weir replay (CLI): ${cli.eventsPerSecond.toLocaleString('en-US')} events/s\n`);

    const rebuildEps = median(measurements.map((m) => m.rebuild.eventsPerSecond));
    const readAllEps = median(measurements.map((m) => m.readAll?.eventsPerSecond ?? 0));
    const peakRss = Math.max(...measurements.map((m) => m.rssMiB.maxRss));
    const events = measurements[0]!.events;
    const summary = {
      date: new Date().toISOString(),
      node: process.version,
      log: { path: settings.keep || settings.reuse ? dbPath : '(temporary, removed)', events, fileMiB, generation },
      /** Whether every rebuild has as many documents per collection as the live projections built (the full comparison is test/integration/replay-cross-check.test.ts). */
      crossCheck:
        liveDocuments === null
          ? null
          : {
              documentCountsMatchLive: measurements.every(
                (m) => JSON.stringify(m.documents) === JSON.stringify(liveDocuments),
              ),
            },
      runs: measurements,
      median: {
        readAllEventsPerSecond: readAllEps,
        rebuildEventsPerSecond: rebuildEps,
        rebuildMs: median(measurements.map((m) => m.rebuild.ms)),
        rebuildCpuMs: median(measurements.map((m) => m.rebuild.cpuMs)),
      },
      /** 1-minute load average before and after the measurements (2 = both cores busy). */
      loadAverage: { before: loadBefore, after: +loadavg()[0]!.toFixed(2) },
      peakRssMiB: peakRss,
      cli,
      target: { rebuildEventsPerSecond: TARGET_EVENTS_PER_SECOND, met: rebuildEps >= TARGET_EVENTS_PER_SECOND },
    };
    const fmt = (n: number) => n.toLocaleString('en-US');
    const table = [
      '| Measurement | events | wall time (median) | CPU time (median) | events/s (median) | runs (events/s) | peak RSS |',
      '|---|---:|---:|---:|---:|---|---:|',
      `| readAll, batches of ${measurements[0]!.readAll?.batchSize ?? '-'} (raw log read) | ${fmt(events)} | ${median(measurements.map((m) => m.readAll?.ms ?? 0))} ms | - | ${fmt(readAllEps)} | ${measurements.map((m) => fmt(m.readAll?.eventsPerSecond ?? 0)).join(' / ')} | - |`,
      `| rebuild(), ALL_PROJECTIONS, embedded read store | ${fmt(events)} | ${summary.median.rebuildMs} ms | ${summary.median.rebuildCpuMs} ms | ${fmt(rebuildEps)} | ${measurements.map((m) => fmt(m.rebuild.eventsPerSecond)).join(' / ')} | ${peakRss} MiB |`,
      `| \`weir replay\` (CLI, same log) | ${fmt(cli.events)} | ${Math.round(cli.seconds * 1000)} ms | - | ${fmt(cli.eventsPerSecond)} | 1 run | - |`,
    ].join('\n');
    await report(
      summary,
      table,
      [
        `Target rebuild >= ${fmt(TARGET_EVENTS_PER_SECOND)} events/s: ${fmt(rebuildEps)} -> ${summary.target.met ? 'met' : 'MISSED'}`,
        ...(summary.crossCheck
          ? [
              `Cross-check: documents per collection ${summary.crossCheck.documentCountsMatchLive ? 'match' : 'DO NOT match'} the live read models`,
            ]
          : []),
      ],
      settings.jsonOut,
    );
  } finally {
    if (settings.reuse === null && !settings.keep) await rm(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
