import test from 'ava';
import { RpcRequestError } from 'viem';
import type { EvmWriteClients } from './clients.ts';
import { keepsNoHistory, minedWithNonce } from './flush-forwarders.ts';

const FROM = '0x5Ea1Fee5EA1fEe5EA1feE5EA1Fee5Ea1Fee5Ea1F';

/** A node whose head is block 10 and whose nonce count at a past block is answered `error`. */
const nodeAnswering = (error: { code: number; message: string }) => ({
  publicClient: {
    getBlockNumber: async () => 10n,
    getTransactionCount: async ({ blockNumber }: { blockNumber: bigint }) => {
      if (blockNumber === 10n) return 5;
      throw new RpcRequestError({ body: {}, url: 'http://127.0.0.1:8545', error });
    },
  } as unknown as EvmWriteClients['publicClient'],
});

test('a node keeping no state that old cannot tell which transaction took a nonce: no copy, as before', async (t) => {
  t.is(await minedWithNonce(nodeAnswering({ code: -32000, message: 'missing trie node abc (path )' }), FROM, 3), null);
});

test('any other error answer (a rate limit, a lagging backend) is thrown, so the look-up is tried again rather than the sweep taken as lost', async (t) => {
  for (const error of [
    { code: -32005, message: 'limit exceeded' },
    { code: -32000, message: 'header not found' },
  ])
    await t.throwsAsync(minedWithNonce(nodeAnswering(error), FROM, 3), { instanceOf: RpcRequestError }, error.message);
});

test('the words of nodes that keep no history are told from other errors', (t) => {
  for (const message of [
    'missing trie node 5d8c0e4a (path )',
    'state at block #12 is pruned',
    'World state unavailable for block 0x12',
    'historical state not available in path scheme yet',
    'This request is not supported because your node is not an archive node',
  ])
    t.true(keepsNoHistory(message), message);
  for (const message of ['limit exceeded', 'header not found', 'request timed out', 'unknown block'])
    t.false(keepsNoHistory(message), message);
});
