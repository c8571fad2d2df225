import { getEventListeners } from 'node:events';
import test from 'ava';
import { startStalledEndpoint } from './follower-test-kit.ts';
import { createRpcEndpoints } from './rpc-endpoints.ts';

test('MaxListenersExceededWarning: requests over many turns of the event loop add one listener to the stop signal, not one each', async (t) => {
  const endpoint = await startStalledEndpoint();
  t.teardown(() => endpoint.close());
  const stop = new AbortController();
  const rpc = createRpcEndpoints({
    network: 'testnet',
    urls: [endpoint.url],
    timeoutMs: 60_000,
    batchSize: 100,
    preferredRetryMs: 60_000,
    log: () => {},
    now: Date.now,
    signal: stop.signal,
  });
  const pending: Promise<unknown>[] = [];
  for (let turn = 0; turn < 20; turn++) {
    pending.push(rpc.request('eth_blockNumber', []));
    await new Promise((resolve) => setImmediate(resolve));
  }
  t.is(getEventListeners(stop.signal, 'abort').length, 1);
  stop.abort(new Error('follower stopped'));
  const settled = await Promise.allSettled(pending);
  t.true(
    settled.every((s) => s.status === 'rejected'),
    'every request in flight ends when the follower stops',
  );
});
