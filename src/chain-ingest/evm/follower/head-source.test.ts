import test from 'ava';
import { createHeadSource } from './head-source.ts';
import type { RpcEndpoints } from './rpc-endpoints.ts';

/** A node answering eth_blockNumber with `heads` in turn (an Error entry fails that request). */
function polledNode(heads: (number | Error)[]) {
  let asked = 0;
  const rpc: RpcEndpoints = {
    async request(method) {
      if (method !== 'eth_blockNumber') throw new Error(`unexpected ${method}`);
      const next = heads[Math.min(asked, heads.length - 1)]!;
      asked += 1;
      if (next instanceof Error) throw next;
      return `0x${next.toString(16)}`;
    },
    current: () => 'http://127.0.0.1:1',
    counters: () => ({
      calls: {},
      httpRequests: 0,
      failures: { timeout: 0, unreachable: 0, rejected: 0 },
      endpointSwitches: 0,
    }),
  };
  return { rpc, asked: () => asked };
}

const sourceOn = (rpc: RpcEndpoints, now: () => number, pollIntervalMs = 60_000) =>
  createHeadSource({
    network: 'testnet',
    rpc,
    ws: [],
    clock: { now },
    pollIntervalMs,
    heartbeatMs: pollIntervalMs * 10,
    webSocketRetryMs: 1_000,
    rpcTimeoutMs: 1_000,
    beforePoll: async () => {},
    log: () => {},
    onError: () => {},
    onWake: () => {},
  });

test('without a WebSocket each look polls the head, with the time it was asked; the next look is due after the poll interval', async (t) => {
  const node = polledNode([7, 9]);
  let time = 1_000;
  const heads = sourceOn(node.rpc, () => time, 60_000);
  t.deepEqual(await heads.look(), { number: 7, at: 1_000 });
  t.is(heads.latest(), 7);
  t.is(heads.kind(), 'polling');
  t.is(heads.interval(), 60_000);
  time = 2_000;
  t.deepEqual(await heads.look(), { number: 9, at: 2_000 });
  t.is(node.asked(), 2);
  await heads.close();
});

test('a failed head read throws, keeps the last head, and the next look asks again', async (t) => {
  const node = polledNode([new Error('connection refused'), 12]);
  const heads = sourceOn(node.rpc, () => 0);
  await t.throwsAsync(heads.look(), { message: /connection refused/ });
  t.is(heads.latest(), undefined);
  t.deepEqual(await heads.look(), { number: 12, at: 0 });
  t.is(node.asked(), 2);
  await heads.close();
});
