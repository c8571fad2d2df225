import test from 'ava';
import { startFakeJsonRpc } from '../../../../test/support/fake-json-rpc.ts';
import { createInProcessBus } from '../../../bus/in-process-bus.ts';
import { createWatchedAddresses } from '../../watched-addresses.ts';
import { createInMemoryCheckpointStore } from './checkpoint.ts';
import { WrongChainError } from './errors.ts';
import { createEvmFollower } from './evm-follower.ts';
import { waitUntil } from './follower-test-kit.ts';

const KEY = 'k3y-0f-the-pr0vider';

test('an endpoint of another chain is named by scheme and host: the API key in its URL is in no error, log line or status', async (t) => {
  const base = await startFakeJsonRpc(t, (method) => {
    if (method === 'eth_chainId') return '0x1';
    throw new Error(`${method} is not served here`);
  });
  const url = `${base}/v2/${KEY}?api-key=${KEY}`;
  t.false(new WrongChainError('devnet', url, 31337, 1).message.includes(KEY));
  t.regex(new WrongChainError('devnet', url, 31337, 1).message, /^http:\/\/127\.0\.0\.1:\d+\/… serves chain id 1/);

  const lines: string[] = [];
  const bus = createInProcessBus();
  t.teardown(() => bus.close());
  const follower = createEvmFollower({
    network: {
      network: 'devnet',
      chainId: 31337,
      confirmations: 1,
      tokens: [],
      nativeSymbol: 'ETH',
      nativeDecimals: 18,
    },
    rpc: { http: [url], ws: [] },
    bus,
    watched: createWatchedAddresses(),
    checkpoints: createInMemoryCheckpointStore(),
    pollIntervalMs: 50,
    maxBackoffMs: 50,
    log: (line) => lines.push(line),
  });
  t.teardown(() => follower.stop());
  await follower.start();
  await waitUntil('the wrong chain reported', () => follower.status().lastError?.includes('serves chain id 1'));
  const status = follower.status();
  t.false(status.lastError!.includes(KEY), status.lastError!);
  t.false(status.endpoint.includes(KEY), status.endpoint);
  t.false(
    lines.some((line) => line.includes(KEY)),
    lines.join('\n'),
  );
});
