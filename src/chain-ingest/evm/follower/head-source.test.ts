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
  });

test('without a WebSocket the heads are polled: the first at once, the next after wake(), each with the time it was asked', async (t) => {
  const node = polledNode([7, 9]);
  let time = 1_000;
  const heads = sourceOn(node.rpc, () => time);
  const pulls = heads[Symbol.asyncIterator]();
  t.deepEqual((await pulls.next()).value, { type: 'head', number: 7, at: 1_000 });
  t.is(heads.latest(), 7);
  t.is(heads.kind(), 'polling');
  time = 2_000;
  // The poll interval is a minute: only wake() lets the next pull through now.
  const second = pulls.next();
  heads.wake();
  t.deepEqual((await second).value, { type: 'head', number: 9, at: 2_000 });
  await heads.close();
  t.true((await pulls.next()).done, 'closing ends the iteration');
});

test('a failed head read is handed over as an error, and the next pull asks again', async (t) => {
  const node = polledNode([new Error('connection refused'), 12]);
  const heads = sourceOn(node.rpc, () => 0);
  const pulls = heads[Symbol.asyncIterator]();
  const failed = (await pulls.next()).value;
  t.is(failed?.type, 'error');
  t.is(heads.latest(), undefined);
  heads.wake();
  t.deepEqual((await pulls.next()).value, { type: 'head', number: 12, at: 0 });
  t.is(node.asked(), 2);
  await heads.close();
});

test('close() while a pull waits for the poll interval ends it at once', async (t) => {
  const heads = sourceOn(polledNode([3]).rpc, () => 0);
  const pulls = heads[Symbol.asyncIterator]();
  await pulls.next();
  const waiting = pulls.next();
  await heads.close();
  t.true((await waiting).done);
});
