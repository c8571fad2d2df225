import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';
import { createMerchant } from '../support/weir-harness.ts';
import { spawnWeir } from '../support/weir-process.ts';

const tempDir = async (t: ExecutionContext) => {
  const dir = await mkdtemp(join(tmpdir(), 'weir-serve-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
};

test('MaxListenersExceededWarning: weir serve with more than ten webhook deliveries in flight writes no listener warning', async (t) => {
  // A receiver that never answers keeps every delivery in flight until its timeout.
  const receiver = await startWebhookReceiver(() => 'hang');
  t.teardown(() => receiver.close());
  const server = await spawnWeir({ dataDir: await tempDir(t) });
  t.teardown(() => server.kill());
  const { api } = await createMerchant(server.url);
  const endpoints = await Promise.all(
    Array.from({ length: 12 }, (_, i) =>
      api.post<{ id: string }>('/api/v1/webhook-endpoints', {
        description: `slow ${i}`,
        url: receiver.url,
        enabledEvents: { events: ['*'] },
      }),
    ),
  );
  for (const endpoint of endpoints) {
    t.is(endpoint.status, 200, JSON.stringify(endpoint.body));
    t.is((await api.post(`/api/v1/webhook-endpoints/${endpoint.body.id}/test`)).status, 200);
  }
  await receiver.waitFor((all) => all.length >= 12);
  for (let i = 0; i < 3; i++) t.is((await fetch(`${server.url}/health`)).status, 200);
  // Stopped and its output read to the end, so a warning written at any time is in it.
  await server.kill('SIGTERM');
  t.is(server.child.exitCode, 0, server.output());
  t.notRegex(server.output(), /MaxListenersExceededWarning|memory leak detected/);
});
