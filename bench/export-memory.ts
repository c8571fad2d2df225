/**
 * The CSV export's memory: `GET /api/v1/checkout/sessions/export` over N sessions, the process's
 * resident and heap memory sampled every 10 ms while the export streams, against the same process
 * idle just before (after a full GC). Weir and the reader run in this one process (embedded stores).
 *
 *   node --expose-gc --import tsx bench/export-memory.ts [--sessions 100000] [--concurrency 16] [--json FILE]
 *
 * Target (issue 19): flat, under 50 MB above idle.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { startWeir } from '../src/app/start-weir.ts';
import { createTestRail } from '../src/chain-ingest/test-rail.ts';
import { apiClient } from '../test/support/api-client.ts';
import { ADMIN_TOKEN, createMerchant, sessionRequest } from '../test/support/weir-harness.ts';
import { cliArgs } from './support/cli-args.ts';

const MB = 1024 * 1024;

async function main(): Promise<void> {
  const args = cliArgs(process.argv.slice(2));
  const sessions = args.integer('--sessions', 100_000, 2_000_000);
  const concurrency = args.integer('--concurrency', 16, 256);
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc');
  const dataDir = await mkdtemp(join(tmpdir(), 'weir-bench-export-'));
  const weir = await startWeir(
    {
      port: 0,
      host: '127.0.0.1',
      dataDir,
      adminToken: ADMIN_TOKEN,
      rateLimits: false,
      chainEnv: {},
      localChain: false,
    },
    { extraRails: [createTestRail()], log: () => {} },
  );
  try {
    const merchant = await createMerchant(weir.url, 'Bench Export Shop');
    const api = apiClient(weir.url, merchant.testSecretKey, { checkResponses: false });
    const first = await api.post<{ lineItems: { data: { price: { id: string } }[] } }>(
      '/api/v1/checkout/sessions',
      sessionRequest(),
    );
    const priceId = first.body.lineItems.data[0]!.price.id;
    const started = performance.now();
    let next = 1;
    // Bounded: each worker takes the next number until all are made.
    const worker = async () => {
      while (next < sessions) {
        const i = next++;
        const made = await api.post('/api/v1/checkout/sessions', {
          mode: 'payment',
          successUrl: 'https://shop.example/thanks',
          clientReferenceId: `order-${i}`,
          lineItems: { data: [{ priceId, quantity: 1 + (i % 3) }] },
        });
        if (made.status !== 200) throw new Error(`create ${i}: ${made.status} ${JSON.stringify(made.body)}`);
      }
    };
    process.stderr.write(`[bench:export] creating ${sessions} sessions ... `);
    await Promise.all(Array.from({ length: concurrency }, worker));
    const seedSeconds = (performance.now() - started) / 1000;
    process.stderr.write(`${seedSeconds.toFixed(1)} s\n`);
    const head = await weir.eventStore.headPosition();
    if (head !== null) await weir.projections.waitFor(head);

    gc();
    const idle = process.memoryUsage();
    let peakRss = idle.rss;
    let peakHeap = idle.heapUsed;
    const sampler = setInterval(() => {
      const m = process.memoryUsage();
      peakRss = Math.max(peakRss, m.rss);
      peakHeap = Math.max(peakHeap, m.heapUsed);
    }, 10);
    const exportStarted = performance.now();
    const response = await fetch(`${weir.url}/api/v1/checkout/sessions/export`, {
      headers: { authorization: `Bearer ${merchant.testSecretKey}` },
    });
    if (!response.ok || !response.body) throw new Error(`export: ${response.status}`);
    let bytes = 0;
    let rows = 0;
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      bytes += chunk.length;
      for (const byte of chunk) if (byte === 10) rows += 1;
    }
    const exportSeconds = (performance.now() - exportStarted) / 1000;
    clearInterval(sampler);
    const result = {
      date: new Date().toISOString(),
      machine: {
        cpus: cpus().length,
        cpu: cpus()[0]?.model,
        memoryGiB: Math.round(totalmem() / 1024 ** 3),
        node: process.version,
        load: loadavg()[0],
      },
      sessions,
      seedSeconds: +seedSeconds.toFixed(1),
      export: { rows: rows - 1, megabytes: +(bytes / MB).toFixed(1), seconds: +exportSeconds.toFixed(2) },
      idle: { rssMB: +(idle.rss / MB).toFixed(1), heapMB: +(idle.heapUsed / MB).toFixed(1) },
      peakAboveIdle: {
        rssMB: +((peakRss - idle.rss) / MB).toFixed(1),
        heapMB: +((peakHeap - idle.heapUsed) / MB).toFixed(1),
      },
      target: 'under 50 MB above idle',
    };
    if (result.export.rows !== sessions) process.stderr.write(`[bench:export] expected ${sessions} rows\n`);
    console.log(JSON.stringify(result, null, 2));
    const json = args.value('--json');
    if (json) await writeFile(json, `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await weir.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
