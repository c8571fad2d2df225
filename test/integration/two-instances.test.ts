import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { sharedInstanceKeys } from '../support/instance-keys.ts';
import { startNatsServer } from '../support/nats-server.ts';
import { scrapeMetrics } from '../support/metrics-scrape.ts';
import { ADMIN_TOKEN } from '../support/weir-harness.ts';
import { spawnWeir } from '../support/weir-process.ts';

/** The work kinds of a Weir without a chain (no follower, no sweeper): each must run in exactly one instance. */
const KINDS = [
  'webhooks',
  'timers',
  'workflow.invoice-payments',
  'mail',
  'workflow.invoice-session-closing',
  'workflow.subscription-billing',
  'workflow.customer-checkout-updates',
  'workflow.promotion-code-releases',
  'audit-checkpoints',
];

const owned = async (url: string) => {
  const scrape = await scrapeMetrics(url);
  return KINDS.filter((kind) => scrape.value('weir_ownership_owned', { kind }) === 1);
};

/** Asks `check` every 100 ms until it holds, at most 20 s; how long it took. */
async function until(what: string, check: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > 20_000) throw new Error(`not within 20 s: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return Date.now() - started;
}

test('two weir serve on one NATS and one event store file: each work runs once, a record written on one is read on the other, and the work moves when its owner is killed or stops', async (t) => {
  t.timeout(150_000);
  const nats = await startNatsServer();
  t.teardown(() => nats.stop());
  const root = await mkdtemp(join(tmpdir(), 'weir-two-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  const env = {
    ...sharedInstanceKeys(),
    NATS_URL: nats.url,
    WEIR_EVENT_STORE_FILE: join(root, 'shared', 'events.sqlite3'),
    WEIR_LEASE_TTL: '1',
    WEIR_AUDIT_CHECKPOINT_INTERVAL: '3600',
  };
  const a = await spawnWeir({ dataDir: join(root, 'a'), env });
  t.teardown(() => a.kill('SIGKILL'));
  const b = await spawnWeir({ dataDir: join(root, 'b'), env });
  t.teardown(() => b.kill('SIGKILL'));

  // A third with a master key of its own (its data dir's) would fail on the first webhook secret: refused at start.
  const refused = await t.throwsAsync(
    spawnWeir({ dataDir: join(root, 'c'), env: { ...env, WEIR_MASTER_KEY: sharedInstanceKeys().WEIR_MASTER_KEY } }),
  );
  t.regex(refused?.message ?? '', /WEIR_MASTER_KEY differs from the one the other Weir instances on this NATS use/);

  t.deepEqual(await owned(a.url), KINDS, 'the first up owns every work');
  t.deepEqual(await owned(b.url), [], 'the second stands by');

  // Written through one, read through the other (its projections follow the shared file).
  const created = await fetch(`${a.url}/admin/organizations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Two Instances Shop' }),
  });
  t.is(created.status, 200);
  const { testSecretKey } = (await created.json()) as { testSecretKey: string };
  await until('the organization read on the other instance', async () => {
    const response = await fetch(`${b.url}/api/v1/organization`, {
      headers: { authorization: `Bearer ${testSecretKey}` },
    });
    return response.status === 200;
  });

  // kill -9: nothing released; the server expires the leases and the other takes every work over.
  await a.kill('SIGKILL');
  const tookOver = await until(
    'every work taken over after the kill',
    async () => (await owned(b.url)).length === KINDS.length,
  );
  t.log(`all ${KINDS.length} kinds taken over ${tookOver} ms after kill -9 (lease TTL 1 s)`);
  t.regex(b.output(), /"event":"ownership.acquired"/);

  // The killed one comes back on its data dir: it stands by; a graceful stop of the owner hands over at once.
  const again = await spawnWeir({ dataDir: join(root, 'a'), env });
  t.teardown(() => again.kill('SIGKILL'));
  t.deepEqual(await owned(again.url), []);
  await b.kill('SIGTERM');
  const handedOver = await until(
    'every work handed over on stop',
    async () => (await owned(again.url)).length === KINDS.length,
  );
  t.log(`handed over ${handedOver} ms after the owner stopped`);
  t.regex(b.output(), /"event":"ownership.released"/);
  const moves = await scrapeMetrics(again.url);
  t.is(moves.value('weir_ownership_moves_total', { kind: 'timers', move: 'acquired' }), 1);
});
