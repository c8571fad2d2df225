/**
 * Where one checkout-session create's CPU goes in the Weir process, step by step.
 *
 *   node --import tsx bench/create-profile.ts [--duration 8] [--warmup 3] [--connections 50]
 *     [--interval-us 250] [--profile FILE.cpuprofile] [--price-id] [--top 40]
 *   node --import tsx bench/create-profile.ts --analyze FILE.cpuprofile --requests N
 *   (npm run bench:create-profile)
 *
 * Weir runs in a child process (bench/targets/weir-server.ts, as bench/http.ts runs it). After a
 * warm-up of the same requests, the child profiles itself (V8's sampler through the inspector)
 * for just the measured window of `POST /api/v1/checkout/sessions` (inline `priceData`, as
 * bench/http.ts's case (c) sends; `--price-id` sends an existing price's id, case (d)), and reports
 * its CPU time (user + system) per create over that window.
 *
 * Each sample goes to one step: the innermost frame on its stack that is Weir's own code (a file
 * under src/), so a library's or a native function's time (zod, better-sqlite3, JSON) counts for
 * the module of ours that called it; samples with no frame of ours go to the innermost library
 * (koa, node's http) or to V8's own (garbage collector, program). Shares are of the busy (not
 * idle) samples; ms per create apportions the measured CPU time by those shares.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { ADMIN_TOKEN, createMerchant, sessionRequest } from '../test/support/weir-harness.ts';
import { cliArgs } from './support/cli-args.ts';
import { startTarget } from './support/target.ts';

type CallFrame = { functionName: string; url: string; lineNumber: number; columnNumber: number };
type ProfileNode = { id: number; callFrame: CallFrame; children?: number[] };
type CpuProfile = { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };

const isCpuProfile = (value: unknown): value is CpuProfile =>
  typeof value === 'object' &&
  value !== null &&
  Array.isArray((value as CpuProfile).nodes) &&
  Array.isArray((value as CpuProfile).samples);

const srcPath = (url: string): string | null => {
  const at = url.indexOf('/src/');
  return at >= 0 && !url.includes('/node_modules/') ? url.slice(at + 1).replace(/\?.*$/, '') : null;
};

const libraryName = (frame: CallFrame): string => {
  const { url, functionName } = frame;
  if (url === '') return `(${functionName || 'native'})`.replace(/^\(\((.*)\)\)$/, '($1)');
  if (url.startsWith('node:')) return url;
  const modules = url.lastIndexOf('/node_modules/');
  if (modules < 0) return url.replace(/^file:\/\/.*\/(bench|test)\//, '$1/');
  const [first, second] = url.slice(modules + '/node_modules/'.length).split('/');
  return first!.startsWith('@') ? `${first}/${second}` : first!;
};

/**
 * The steps of a create, most specific first: a sample goes to the first step with a frame on its
 * stack (`stack`) or, for what wraps every request (metrics, tracing, logging), whose code is the
 * innermost frame with a source (`leaf`). The log's followers come before the stores they use.
 */
const STEPS: {
  step: string;
  on: 'stack' | 'leaf';
  test: (url: string) => boolean;
  /** And a frame further out on the stack passes this. */
  within?: (url: string) => boolean;
}[] = [
  { step: 'hash chain (event-chain.ts)', on: 'stack', test: (url) => url.includes('/src/event-store/event-chain.ts') },
  {
    step: 'workflows: read the log, fold, store states',
    on: 'stack',
    test: (url) => url.includes('/src/workflows/'),
  },
  {
    step: 'projections: read the log, write documents',
    on: 'stack',
    test: (url) => url.includes('/src/projections/projection-runner.ts'),
  },
  {
    step: 'activity log: read the log, write lines',
    on: 'stack',
    test: (url) => url.includes('/src/app/activity-log.ts'),
  },
  {
    step: 'event store: append, commit (fsync)',
    on: 'stack',
    test: (url) => url.includes('/src/event-store/'),
  },
  {
    step: 'read store: lookups in the request (key, prices)',
    on: 'stack',
    test: (url) => url.includes('/src/read-store/'),
    within: (url) => url.includes('/src/read-api/') || url.includes('/src/actors/'),
  },
  { step: 'read store: batch commits (timer)', on: 'stack', test: (url) => url.includes('/src/read-store/') },
  {
    step: 'request validation (zod schemas)',
    on: 'stack',
    test: (url) => url.includes('/node_modules/zod/') || url.includes('/src/read-api/schema/'),
  },
  {
    step: 'command: load, decide (actors, rail)',
    on: 'stack',
    test: (url) => url.includes('/src/actors/') || url.includes('/src/chain-ingest/'),
  },
  {
    step: 'response: render the session',
    on: 'stack',
    test: (url) =>
      url.includes('/src/read-api/routes/') ||
      url.includes('/src/projections/public-views.ts') ||
      url.includes('/src/shared/evm-address.ts'),
  },
  {
    step: 'metrics (prom-client)',
    on: 'leaf',
    test: (url) => url.includes('/prom-client/') || url.includes('metrics.ts'),
  },
  {
    step: 'tracing',
    on: 'leaf',
    test: (url) => url.includes('/@opentelemetry/') || url.includes('tracing.ts'),
  },
  { step: 'logging (pino)', on: 'leaf', test: (url) => url.includes('/pino') || url.includes('/src/shared/logger.ts') },
  {
    step: 'HTTP: node, Koa, middleware (body, auth, limits)',
    on: 'stack',
    test: (url) => url.includes('/src/read-api/') || url.includes('/node_modules/') || url.startsWith('node:'),
  },
];

/** Per-sample attribution to a step of STEPS, else to V8's own (garbage collector, program) or "other". */
export function steps(profile: CpuProfile) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const stepOf = (id: number): string => {
    const urls: string[] = [];
    for (let current: number | undefined = id; current !== undefined; current = parentOf.get(current))
      urls.push(byId.get(current)!.callFrame.url);
    const leaf = urls.find((url) => url !== '');
    for (const { step, on, test, within } of STEPS) {
      if (on === 'leaf' && leaf !== undefined && test(leaf)) return step;
      const at = on === 'stack' ? urls.findIndex(test) : -1;
      if (at >= 0 && (!within || urls.slice(at + 1).some(within))) return step;
    }
    const name = byId.get(id)!.callFrame.functionName;
    return name.startsWith('(') ? name : 'other';
  };
  const known = new Map<number, string>();
  const byStep = new Map<string, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    if (byId.get(id)!.callFrame.functionName === '(idle)') continue;
    const step = known.get(id) ?? stepOf(id);
    known.set(id, step);
    byStep.set(step, (byStep.get(step) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  return [...byStep].sort((a, b) => b[1] - a[1]);
}

/** Per-sample attribution: the innermost src/ frame, else the innermost frame of any kind. */
export function attribute(profile: CpuProfile, top: number) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const owner = new Map<number, string>();
  const ownerOf = (id: number): string => {
    const known = owner.get(id);
    if (known !== undefined) return known;
    let found: string | null = null;
    for (let current: number | undefined = id; current !== undefined && found === null; current = parentOf.get(current))
      found = srcPath(byId.get(current)!.callFrame.url);
    const label = found ?? libraryName(byId.get(id)!.callFrame);
    owner.set(id, label);
    return label;
  };
  const byOwner = new Map<string, number>();
  // Within each src file, which function of it (and which library below it) the time is in.
  const byOwnerFunction = new Map<string, number>();
  let idleUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    const us = profile.timeDeltas[i] ?? 0;
    const node = byId.get(id)!;
    if (node.callFrame.functionName === '(idle)') {
      idleUs += us;
      continue;
    }
    const label = ownerOf(id);
    byOwner.set(label, (byOwner.get(label) ?? 0) + us);
    let current: number | undefined = id;
    while (current !== undefined && srcPath(byId.get(current)!.callFrame.url) === null) current = parentOf.get(current);
    if (current !== undefined) {
      const frame = byId.get(current)!.callFrame;
      const below = current === id ? 'self' : libraryName(node.callFrame);
      // Where the function starts (line and column of the code tsx runs, which has few lines).
      const key = `${label} ${frame.functionName || '(anonymous)'}@${frame.lineNumber + 1}:${frame.columnNumber + 1} -> ${below}`;
      byOwnerFunction.set(key, (byOwnerFunction.get(key) ?? 0) + us);
    }
  }
  const busyUs = [...byOwner.values()].reduce((a, b) => a + b, 0);
  const sorted = (entries: Map<string, number>) => [...entries].sort((a, b) => b[1] - a[1]).slice(0, top);
  return { busyUs, idleUs, byOwner: sorted(byOwner), byOwnerFunction: sorted(byOwnerFunction) };
}

function print(profile: CpuProfile, requests: number, cpuMs: number | null, top: number): void {
  const { busyUs, idleUs, byOwner, byOwnerFunction } = attribute(profile, top);
  // Without a measured CPU time, the sampled busy time stands for it.
  const perCreateMs = (cpuMs ?? busyUs / 1000) / requests;
  console.log(
    `busy ${(busyUs / 1000).toFixed(0)} ms, idle ${(idleUs / 1000).toFixed(0)} ms sampled; ${requests} creates; ` +
      `${perCreateMs.toFixed(3)} ms CPU per create${cpuMs === null ? ' (sampled busy time)' : ' (process CPU time)'}`,
  );
  const table = (title: string, rows: [string, number][]) => {
    console.log(`\n${title}\n| share | ms/create | where |\n|---:|---:|---|`);
    for (const [label, us] of rows)
      console.log(`| ${((us / busyUs) * 100).toFixed(1)}% | ${((us / busyUs) * perCreateMs).toFixed(3)} | ${label} |`);
  };
  table('By step of a create', steps(profile));
  table('By module (innermost src/ frame, else innermost frame)', byOwner);
  table('By function of ours and what runs below it', byOwnerFunction);
}

async function main(argv: string[]): Promise<void> {
  const { value, integer, flag } = cliArgs(argv);
  const top = integer('--top', 40, 1000);
  const analyze = value('--analyze');
  if (analyze !== undefined) {
    const parsed: unknown = JSON.parse(await readFile(analyze, 'utf8'));
    if (!isCpuProfile(parsed)) throw new Error(`${analyze} is not a V8 CPU profile`);
    print(parsed, integer('--requests', 1, 100_000_000), null, top);
    return;
  }
  const durationS = integer('--duration', 8, 120);
  const warmupS = integer('--warmup', 3, 60);
  const connections = integer('--connections', 50, 1000);
  const intervalUs = integer('--interval-us', 250, 100_000);
  const profileFile = value('--profile') ?? join(tmpdir(), `weir-create-${Date.now()}.cpuprofile`);
  const loadBefore = loadavg()[0]!.toFixed(2);
  const weir = await startTarget('targets/weir-server.ts', { WEIR_ADMIN_TOKEN: ADMIN_TOKEN });
  try {
    const merchant = await createMerchant(weir.url, 'Bench Shop');
    const seed = await merchant.api.post<{ lineItems: { data: { price: { id: string } }[] } }>(
      '/api/v1/checkout/sessions',
      sessionRequest(),
    );
    if (seed.status !== 200) throw new Error(`session create failed: ${seed.status} ${JSON.stringify(seed.body)}`);
    const body = flag('--price-id')
      ? {
          ...sessionRequest(),
          lineItems: { data: [{ priceId: seed.body.lineItems.data[0]!.price.id, quantity: 2 }] },
          clientReferenceId: 'bench-order',
        }
      : { ...sessionRequest(), clientReferenceId: 'bench-order', metadata: { orderId: 'bench' } };
    const options: autocannon.Options = {
      url: `${weir.url}/api/v1/checkout/sessions`,
      method: 'POST',
      headers: { authorization: `Bearer ${merchant.testSecretKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      connections,
      timeout: 10,
    };
    process.stderr.write(`[bench:create-profile] warm-up ${warmupS} s ... `);
    await autocannon({ ...options, duration: warmupS });
    process.stderr.write(`profiling ${durationS} s ... `);
    await weir.startProfile(intervalUs);
    const cpuBefore = (await weir.stats()).cpuMicros;
    const result = await autocannon({ ...options, duration: durationS });
    const cpuMs = ((await weir.stats()).cpuMicros - cpuBefore) / 1000;
    await weir.stopProfile(profileFile);
    process.stderr.write(`${result.requests.total} creates, ${result.non2xx} non-2xx\n`);
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`${result.non2xx} non-2xx, ${result.errors} errors`);
    console.log(`profile: ${profileFile}; load average ${loadBefore} before, ${loadavg()[0]!.toFixed(2)} after`);
    const parsed: unknown = JSON.parse(await readFile(profileFile, 'utf8'));
    if (!isCpuProfile(parsed)) throw new Error(`${profileFile} is not a V8 CPU profile`);
    print(parsed, result.requests.total, cpuMs, top);
    await writeFile(`${profileFile}.requests`, String(result.requests.total));
  } finally {
    await weir.stop();
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
