/**
 * Weir for bench/http.ts: the whole server (startWeir) in its own process on a free loopback port,
 * with a fresh temporary data dir (SQLite log, embedded read store, in-process bus) and the test
 * rail, exactly as the test harness starts it. The admin token comes from WEIR_ADMIN_TOKEN. The
 * rate limits are off: the load generator is one client with one key, far past any limit.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startWeir } from '../../src/app/start-weir.ts';
import { createTestRail } from '../../src/chain-ingest/test-rail.ts';
import { serveParent } from './target-ipc.ts';

const adminToken = process.env.WEIR_ADMIN_TOKEN;
if (!adminToken) throw new Error('weir-server: set WEIR_ADMIN_TOKEN');
const dataDir = await mkdtemp(join(tmpdir(), 'weir-bench-http-'));
const weir = await startWeir(
  { port: 0, host: '127.0.0.1', dataDir, adminToken, rateLimits: false },
  { log: () => {}, extraRails: [createTestRail()] },
);
serveParent(weir.url, async () => {
  await weir.stop();
  await rm(dataDir, { recursive: true, force: true });
});
