/**
 * Resident memory of a `weir serve` whose read models hold a million open checkout sessions.
 *
 *   node --import tsx bench/open-sessions.ts --log FILE [--sessions 1000000] [--json FILE]
 *   (npm run bench:open-sessions)
 *
 * 1. A data dir with a copy of the log FILE (bench:startup keeps its logs: --logs DIR), its read
 *    models built by `weir replay`.
 * 2. `--sessions` open sessions added to those read models straight through the SQLite read store,
 *    each a copy of a session of the log with its own id and deposit address, and an expiry timer a
 *    day ahead: what the read models of that many sessions created and not yet paid hold. (Writing
 *    them through the command handlers would take hours here; `weir serve` reads only its read
 *    models at start, so it cannot tell.) The stored log position is left as it was.
 * 3. `weir serve` on it, and on an empty data dir, from spawn to `/health` ok: the time, and VmRSS
 *    then and 15 s later (the timers, dispatchers and watched addresses loaded), with VmHWM.
 *
 * Target (issue 20): under 1 GB resident with 1,000,000 open sessions. Not a test.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { SQLITE_EVENT_STORE_FILE } from '../src/event-store/open-event-store.ts';
import { READ_MODEL_INDEXES } from '../src/projections/all-projections.ts';
import { COLLECTIONS } from '../src/projections/collections.ts';
import { PROJECTIONS_CHECKPOINT } from '../src/projections/projection-runner.ts';
import type { ReadDocument } from '../src/read-store/read-store.ts';
import { createSqliteReadStore, SQLITE_READ_STORE_FILE } from '../src/read-store/sqlite-read-store.ts';
import { fmt, loadAverage1m, machineInfo, markdownTable } from './evm/support/bench-env.ts';
import { cliArgs } from './support/cli-args.ts';
import { report } from './support/report.ts';
import { type Memory, memoryOf, serveEnv, serveUntilHealthy } from './support/serve-until-healthy.ts';

const run = promisify(execFile);
const WEIR_BIN = fileURLToPath(new URL('../bin/weir.js', import.meta.url));
const SETTLE_MS = 15_000;

type Serve = { ms: number; atHealth: Memory; settled: Memory };

/** `weir serve` on `dataDir`: start time, memory at /health and after settling. */
const serve = (dataDir: string): Promise<Serve> =>
  serveUntilHealthy(
    dataDir,
    async (pid) => {
      const atHealth = memoryOf(pid);
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      return { atHealth, settled: memoryOf(pid) };
    },
    { pollMs: 20 },
  );

/** Adds `sessions` open sessions (copies of one in the read models) with their address and expiry timer. */
async function addOpenSessions(path: string, sessions: number): Promise<number> {
  const store = createSqliteReadStore({
    path,
    ...READ_MODEL_INDEXES,
    writes: 'trusted',
    commitEveryWrites: 50_000,
  });
  const started = performance.now();
  try {
    const checkoutSessions = store.collection(COLLECTIONS.checkoutSessions);
    const [session] = await checkoutSessions.find({}, { limit: 1 });
    if (!session) throw new Error('the log holds no checkout session to copy');
    const addresses = store.collection(COLLECTIONS.depositAddresses);
    const [address] = await addresses.find({ checkoutSessionId: session._id }, { limit: 1 });
    if (!address) throw new Error(`no deposit address of ${session._id}`);
    const timers = store.collection(COLLECTIONS.timers);
    const [timer] = await timers.find({}, { limit: 1 });
    const position = await store.getCheckpoint(PROJECTIONS_CHECKPOINT);
    const fireAt = Date.now() + 86_400_000;
    for (let i = 0; i < sessions; i++) {
      const id = `cs_bench_${String(i).padStart(7, '0')}`;
      const hex = `0x${i.toString(16).padStart(40, '0')}`;
      await checkoutSessions.put({
        ...session,
        _id: id,
        status: 'open',
        createdAt: new Date(fireAt - i).toISOString(),
      });
      await addresses.put({ ...address, _id: `dep_bench_${i}`, address: hex, checkoutSessionId: id } as ReadDocument);
      if (timer) await timers.put({ ...timer, _id: `timer_bench_${i}`, recordId: id, fireAt } as ReadDocument);
      // The stored position, unchanged: each time it is set, what was written so far may commit.
      if (i % 1000 === 999) await store.setCheckpoint(PROJECTIONS_CHECKPOINT, position);
      if (i % 100_000 === 99_999) process.stderr.write(`[bench:open-sessions]   ${fmt(i + 1)} sessions\n`);
    }
    await store.setCheckpoint(PROJECTIONS_CHECKPOINT, position);
  } finally {
    await store.close();
  }
  return Math.round(performance.now() - started);
}

async function main(): Promise<void> {
  const { value, integer } = cliArgs(process.argv.slice(2));
  const log = value('--log');
  if (!log) throw new Error('--log FILE: a log to start from (bench:startup --logs DIR keeps them)');
  const sessions = integer('--sessions', 1_000_000, 5_000_000);
  const jsonOut = value('--json') ?? null;
  const scratch = await mkdtemp(join(tmpdir(), 'weir-bench-open-sessions-'));
  const loadBefore = loadAverage1m();
  try {
    const empty = join(scratch, 'empty');
    await mkdir(empty, { mode: 0o700 });
    const dataDir = join(scratch, 'sessions');
    await mkdir(dataDir, { mode: 0o700 });
    await copyFile(log, join(dataDir, SQLITE_EVENT_STORE_FILE));
    process.stderr.write('[bench:open-sessions] weir replay ...\n');
    const replay = await run(process.execPath, [WEIR_BIN, 'replay', '--data-dir', dataDir], {
      env: serveEnv(dataDir, 0),
      maxBuffer: 16 * 2 ** 20,
    });
    process.stderr.write(`[bench:open-sessions] ${replay.stdout.trim().split('\n').at(-1)}\n`);
    const readModels = join(dataDir, SQLITE_READ_STORE_FILE);
    process.stderr.write(`[bench:open-sessions] adding ${fmt(sessions)} open sessions ...\n`);
    const addMs = await addOpenSessions(readModels, sessions);
    const fileMiB = +((await stat(readModels)).size / 2 ** 20).toFixed(0);
    process.stderr.write(`[bench:open-sessions] added in ${fmt(addMs)} ms; read models ${fmt(fileMiB)} MiB\n`);
    await serve(empty); // warm-up (tsx cache)
    const baseline = await serve(empty);
    const loaded = await serve(dataDir);
    const summary = {
      date: new Date().toISOString(),
      machine: machineInfo(),
      loadAverage1m: { before: loadBefore, after: loadAverage1m() },
      sessions,
      readModelsMiB: fileMiB,
      addMs,
      emptyDataDir: baseline,
      openSessions: loaded,
    };
    const row = (label: string, s: Serve) => [
      label,
      fmt(s.ms),
      s.atHealth.rssMiB,
      s.settled.rssMiB,
      s.settled.peakRssMiB,
    ];
    const table = markdownTable(
      ['data dir', 'start to /health ms', 'RSS at /health MiB', `RSS ${SETTLE_MS / 1000} s later MiB`, 'peak RSS MiB'],
      [row('empty', baseline), row(`${fmt(sessions)} open sessions (${fmt(fileMiB)} MiB of read models)`, loaded)],
      [false, true, true, true, true],
    );
    await report(
      summary,
      table,
      [`${fmt(sessions)} open sessions: peak ${loaded.settled.peakRssMiB} MiB resident (target < 1024 MiB)`],
      jsonOut,
    );
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

await main();
