import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SQLITE_EVENT_STORE_FILE } from '../src/event-store/open-event-store.ts';
import { createSqliteEventStore } from '../src/event-store/sqlite-event-store.ts';
import { loadAverage1m, machineInfo, markdownTable, fmt } from './evm/support/bench-env.ts';
import { cliArgs } from './support/cli-args.ts';
import { report } from './support/report.ts';
import { writeRealisticLog } from './support/realistic-log.ts';
import { writeReplicatedLog } from './support/replicated-log.ts';
import { memoryOf, serveUntilHealthy } from './support/serve-until-healthy.ts';

/** Longest wait for one start (the in-memory store rebuilt 1M events in about 20 s). */

/** Logs larger than this are copied from a seed (see replicated-log.ts) rather than written through commands. */
const REPLICATE_ABOVE = 100_000;

type Start = { ms: number; rssMiB: number; peakRssMiB: number };

function readSettings(argv: string[]) {
  const { value, integer } = cliArgs(argv);
  const sizes = (value('--events') ?? '0,100000,1000000').split(',').map((text) => {
    const n = Number(text);
    if (!Number.isInteger(n) || n < 0 || n > 5_000_000) throw new Error(`--events: ${text} is not 0 to 5,000,000`);
    return n;
  });
  return { sizes, runs: integer('--runs', 3, 20), logs: value('--logs') ?? null, jsonOut: value('--json') ?? null };
}

/** The log of about `events` events: from `logs` when kept there, else written (and kept there if asked). */
async function logFile(events: number, logs: string | null, scratch: string): Promise<string | null> {
  if (events === 0) return null;
  const path = join(logs ?? scratch, `events-${events}.sqlite3`);
  if (existsSync(path)) return path;
  process.stderr.write(`[bench:startup] writing about ${fmt(events)} events into ${path} ...\n`);
  if (events > REPLICATE_ABOVE) {
    const started = performance.now();
    const written = await writeReplicatedLog({
      path,
      targetEvents: events,
      seedFile: join(logs ?? scratch, 'seed-20000.sqlite3'),
      onProgress: (n) => process.stderr.write(`[bench:startup]   ${fmt(n)} events\n`),
    });
    process.stderr.write(
      `[bench:startup] wrote ${fmt(written.events)} events (${fmt(written.copies)} copied sessions) in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
    );
    return path;
  }
  const eventStore = createSqliteEventStore({ path });
  const started = performance.now();
  let reported = 0;
  const summary = await writeRealisticLog({
    eventStore,
    targetEvents: events,
    onProgress: (n) => {
      if (n - reported >= 50_000) {
        reported = n;
        process.stderr.write(`[bench:startup]   ${fmt(n)} events\n`);
      }
    },
  });
  await eventStore.close();
  process.stderr.write(
    `[bench:startup] wrote ${fmt(summary.events)} events (${fmt(summary.sessions)} sessions) in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
  );
  return path;
}

/** One `weir serve` on `dataDir`: ms from spawn to /health 200, memory then; stopped with SIGTERM. */
const startOnce = (dataDir: string): Promise<Start> => serveUntilHealthy(dataDir, async (pid) => memoryOf(pid));

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

async function main(): Promise<void> {
  const settings = readSettings(process.argv.slice(2));
  const scratch = await mkdtemp(join(tmpdir(), 'weir-bench-startup-'));
  if (settings.logs) await mkdir(settings.logs, { recursive: true });
  const loadBefore = loadAverage1m();
  const rows: {
    events: number;
    logMiB: number;
    first: Start;
    starts: Start[];
    medianMs: number;
    medianRssMiB: number;
  }[] = [];
  try {
    const logs = new Map<number, string | null>();
    for (const size of settings.sizes) logs.set(size, await logFile(size, settings.logs, scratch));
    // Warm-up: the first start after an install compiles the sources (tsx cache).
    const warm = join(scratch, 'warm-up');
    await startOnce(warm);
    await rm(warm, { recursive: true, force: true });
    for (const size of settings.sizes) {
      const dataDir = join(scratch, `data-${size}`);
      await mkdir(dataDir, { recursive: true, mode: 0o700 });
      const log = logs.get(size) ?? null;
      if (log !== null) await copyFile(log, join(dataDir, SQLITE_EVENT_STORE_FILE));
      const logMiB = log === null ? 0 : +((await stat(log)).size / 2 ** 20).toFixed(1);
      const first = await startOnce(dataDir);
      process.stderr.write(`[bench:startup] ${fmt(size)} events: first start ${fmt(first.ms)} ms\n`);
      const starts: Start[] = [];
      for (let i = 0; i < settings.runs; i++) {
        const start = await startOnce(dataDir);
        starts.push(start);
        process.stderr.write(
          `[bench:startup] ${fmt(size)} events: start ${i + 1}/${settings.runs} ${fmt(start.ms)} ms, RSS ${start.rssMiB} MiB\n`,
        );
      }
      rows.push({
        events: size,
        logMiB,
        first,
        starts,
        medianMs: median(starts.map((s) => s.ms)),
        medianRssMiB: median(starts.map((s) => s.rssMiB)),
      });
      await rm(dataDir, { recursive: true, force: true });
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  const empty = rows.find((row) => row.events === 0) ?? null;
  const summary = {
    date: new Date().toISOString(),
    machine: machineInfo(),
    loadAverage1m: { before: loadBefore, after: loadAverage1m() },
    runs: settings.runs,
    sizes: rows,
  };
  const table = markdownTable(
    [
      'log events',
      'log MiB',
      'first start ms',
      'start ms (median; runs)',
      'x empty log',
      'RSS MiB (median)',
      'peak RSS MiB',
    ],
    rows.map((row) => [
      fmt(row.events),
      row.logMiB,
      fmt(row.first.ms),
      `**${fmt(row.medianMs)}** (${row.starts.map((s) => fmt(s.ms)).join(' / ')})`,
      empty ? (row.medianMs / empty.medianMs).toFixed(2) : '-',
      row.medianRssMiB,
      Math.max(...row.starts.map((s) => s.peakRssMiB)),
    ]),
    [true, true, true, true, true, true, true],
  );
  const largest = rows.at(-1);
  const targets =
    empty && largest
      ? [
          `start with ${fmt(largest.events)} events: ${fmt(largest.medianMs)} ms, ${(largest.medianMs / empty.medianMs).toFixed(2)}x the empty log's ${fmt(empty.medianMs)} ms (target <= 2x)`,
        ]
      : [];
  await report(summary, table, targets, settings.jsonOut);
}

await main();
