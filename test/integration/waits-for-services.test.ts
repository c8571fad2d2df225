import test from 'ava';
import { apiClient, eventually } from '../support/api-client.ts';
import { findFreePort } from '../support/free-port.ts';
import { startNatsServer } from '../support/nats-server.ts';
import { startTestWeir } from '../support/weir-harness.ts';

test('NATS not up yet: weir serve waits for it, saying so with each retry, and serves once it is up (a compose stack starting in any order)', async (t) => {
  const port = await findFreePort();
  const lines: string[] = [];
  const starting = startTestWeir(
    t,
    { natsUrl: `nats://127.0.0.1:${port}`, localChain: false },
    { log: (line) => lines.push(line), connectRetryFirstDelayMs: 50 },
  );
  const waiting = () =>
    lines
      .map((line) => JSON.parse(line) as { event?: string; service?: string; attempt?: number; msg?: string })
      .filter((l) => l.event === 'weir.waiting' && l.service === 'NATS');
  // Twice: so it kept trying, rather than giving up after one failure.
  await eventually(async () => (waiting().length >= 2 ? true : undefined), 'weir to say twice it waits for NATS');
  t.regex(waiting()[0]?.msg ?? '', /NATS is not reachable yet .*; trying again in 0\.1 s/);
  t.true((waiting()[1]?.attempt ?? 0) === 2);

  const nats = await startNatsServer({ port });
  t.teardown(() => nats.stop());
  const weir = await starting;
  const health = await apiClient(weir.url).get<{ status: string }>('/health');
  t.is(health.status, 200, JSON.stringify(health.body));
});
