import test, { type ExecutionContext } from 'ava';
import { findFreePort } from '../../../../test/support/free-port.ts';
import { createInProcessBus } from '../../../bus/in-process-bus.ts';
import { endpointLabel } from '../../../shared/mask-userinfo.ts';
import { createWatchedAddresses } from '../../watched-addresses.ts';
import { createInMemoryCheckpointStore } from './checkpoint.ts';
import { createEvmFollower, type EvmFollowerDeps } from './evm-follower.ts';
import {
  randomAddress,
  spyOnPublishes,
  startRpcProxy,
  startStalledEndpoint,
  startTcpRelay,
  startTestChain,
  transfersIn,
  waitUntil,
  type TestChain,
} from './follower-test-kit.ts';

let chain: TestChain | undefined;

test.before(async () => {
  chain = await startTestChain();
});

test.after.always(async () => {
  await chain?.stop();
});

const network = 'hardhat-endpoints';

function hardhat(): TestChain {
  if (chain === undefined) throw new Error('the hardhat node did not start: see test.before');
  return chain;
}

function setUp(t: ExecutionContext, rpc: EvmFollowerDeps['rpc'], deps: Partial<EvmFollowerDeps> = {}) {
  if (chain === undefined) throw new Error('the hardhat node did not start: see test.before');
  const bus = createInProcessBus();
  const spy = spyOnPublishes(bus);
  const watched = createWatchedAddresses();
  const payTo = randomAddress();
  watched.add(network, payTo);
  const lines: string[] = [];
  const follower = createEvmFollower({
    network: {
      network,
      chainId: chain.node.chainId,
      confirmations: 1,
      tokens: [],
      nativeSymbol: 'ETH',
      nativeDecimals: 18,
    },
    rpc,
    bus: spy.bus,
    watched,
    checkpoints: createInMemoryCheckpointStore(),
    pollIntervalMs: 50,
    log: (line) => lines.push(line),
    ...deps,
  });
  t.teardown(() => follower.stop());
  t.teardown(() => bus.close());
  const paymentPublished = async (fromAccount: number, value = 1_000n) => {
    const paid = await chain!.sendNative({ fromAccount, to: payTo, value });
    return waitUntil(`the payment ${paid.hash}`, () =>
      transfersIn(spy.publications).find((transfer) => transfer.transactionHash === paid.hash),
    );
  };
  return { chain, follower, spy, lines, paymentPublished };
}

test.serial(
  'the first HTTP endpoint is dead (a closed port): the follower works through the second and stays there',
  async (t) => {
    const dead = `http://127.0.0.1:${await findFreePort()}`;
    const { chain, follower, paymentPublished } = setUp(t, { http: [dead, hardhat().node.rpcUrl], ws: [] });
    await follower.start();
    const transfer = await paymentPublished(1);
    t.is(transfer.amount, '1000');
    const status = follower.status();
    t.is(status.endpoint, endpointLabel(chain.node.rpcUrl));
    t.regex(status.lastError ?? '', /^$/, 'the failover itself is no error of the follower');
    const counters = follower.counters();
    t.true(counters.rpc.failures.unreachable >= 1);
    t.is(counters.rpc.endpointSwitches, 1, 'it moved once and stayed on the working endpoint');
  },
);

test.serial('a stalled first endpoint (accepts, never answers) times out and the follower moves on', async (t) => {
  const stalled = await startStalledEndpoint();
  t.teardown(() => stalled.close());
  const { chain, follower, paymentPublished } = setUp(
    t,
    { http: [stalled.url, hardhat().node.rpcUrl], ws: [] },
    { rpcTimeoutMs: 300 },
  );
  await follower.start();
  await paymentPublished(2);
  t.is(follower.status().endpoint, endpointLabel(chain.node.rpcUrl));
  t.true(follower.counters().rpc.failures.timeout >= 1);
});

test.serial(
  'every endpoint down: errors are logged and retried with backoff, and stop() returns promptly even with a request hanging',
  async (t) => {
    const stalled = await startStalledEndpoint();
    t.teardown(() => stalled.close());
    const dead = `http://127.0.0.1:${await findFreePort()}`;
    const { follower, lines } = setUp(t, { http: [dead], ws: [] }, { maxBackoffMs: 200 });
    await follower.start();
    await waitUntil('a few failed attempts', () => follower.counters().errors >= 3);
    t.regex(follower.status().lastError ?? '', /eth_chainId failed on every endpoint.*unreachable/);
    t.true(lines.some((line) => line.includes('retrying in')));
    await follower.stop();

    const hanging = setUp(t, { http: [stalled.url], ws: [] }, { rpcTimeoutMs: 60_000 });
    await hanging.follower.start();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const stopAt = Date.now();
    await hanging.follower.stop();
    t.true(Date.now() - stopAt < 1_000, `stop() took ${Date.now() - stopAt} ms`);
    t.false(hanging.follower.status().running);
  },
);

test.serial('a dead WebSocket URL: new heads come by polling eth_blockNumber', async (t) => {
  const deadWs = `ws://127.0.0.1:${await findFreePort()}`;
  const { follower, lines, paymentPublished } = setUp(t, { http: [hardhat().node.rpcUrl], ws: [deadWs] });
  await follower.start();
  await paymentPublished(3);
  t.is(follower.status().headSource, 'polling');
  // Polling may publish the payment before the failed connection is logged (seen under load).
  await waitUntil('the dead WebSocket logged', () =>
    lines.some((line) => line.includes(`websocket ${deadWs} failed`) && line.includes('polling')),
  );
  t.true((follower.counters().rpc.calls.eth_blockNumber ?? 0) >= 1);
});

test.serial('a live WebSocket announces the heads: a payment is seen without polling', async (t) => {
  // A poll interval far longer than the test: only the WebSocket can bring the new block in time.
  const { follower, paymentPublished } = setUp(
    t,
    { http: [hardhat().node.rpcUrl], ws: [hardhat().node.wsUrl] },
    { pollIntervalMs: 60_000 },
  );
  await follower.start();
  await waitUntil('the websocket', () => follower.status().headSource === 'websocket');
  await waitUntil('the first block', () => follower.status().processed !== null);
  await paymentPublished(4);
  await paymentPublished(4);
  t.true((follower.counters().rpc.calls.eth_blockNumber ?? 0) <= 1, 'eth_blockNumber only at the start');
});

test.serial('a WebSocket that breaks: polling takes over at once, and the socket is reconnected later', async (t) => {
  const relay = await startTcpRelay(hardhat().node.port);
  t.teardown(() => relay.close());
  const {
    chain: live,
    follower,
    lines,
    paymentPublished,
  } = setUp(t, { http: [hardhat().node.rpcUrl], ws: [`ws://127.0.0.1:${relay.port}`] }, { pollIntervalMs: 100 });
  await follower.start();
  await waitUntil('the websocket', () => follower.status().headSource === 'websocket');
  relay.cutAll();
  await waitUntil('polling', () => follower.status().headSource === 'polling');
  await paymentPublished(5);
  await waitUntil('the websocket again', () => follower.status().headSource === 'websocket', 10_000);
  await paymentPublished(5);
  t.true(lines.some((line) => line.includes('failed') && line.includes('websocket again in')));
  t.is(endpointLabel(live.node.rpcUrl), follower.status().endpoint);
});

/** The stall limit in these tests: a head polling saw must be announced within this much of the follower's clock. */
const heartbeatMs = 25;

/** A follower on a WebSocket through a TCP relay, with polls every `heartbeatMs` of real time and a clock the test moves. */
async function setUpRelayedSocket(t: ExecutionContext, deps: Partial<EvmFollowerDeps> = {}) {
  const relay = await startTcpRelay(hardhat().node.port);
  t.teardown(() => relay.close());
  const clock = { at: Date.parse('2026-06-01T10:00:00.000Z'), now: () => clock.at };
  const setup = setUp(
    t,
    { http: [hardhat().node.rpcUrl], ws: [`ws://127.0.0.1:${relay.port}`] },
    { pollIntervalMs: 25, heartbeatMs, clock, ...deps },
  );
  const polls = () => setup.follower.counters().rpc.calls.eth_blockNumber ?? 0;
  const morePolls = async (count: number) => {
    const before = polls();
    await waitUntil(`${count} more eth_blockNumber polls`, () => polls() >= before + count);
  };
  await setup.follower.start();
  await waitUntil('the websocket', () => setup.follower.status().headSource === 'websocket');
  await waitUntil('the first block', () => setup.follower.status().processed !== null);
  return { ...setup, relay, clock, morePolls };
}

test.serial(
  'an idle chain: a subscription that has announced no head yet is not taken for stalled, at start or after a reconnect; the next block comes over it',
  async (t) => {
    const { follower, lines, relay, clock, morePolls, paymentPublished } = await setUpRelayedSocket(t, {
      webSocketRetryMs: 25,
    });
    const socketLines = (what: string) => lines.filter((line) => line.includes('websocket') && line.includes(what));
    /** Moves the follower's clock far past the stall limit twice, with polls after each move. */
    const idleSpan = async () => {
      for (let round = 0; round < 2; round++) {
        clock.at += 10 * heartbeatMs;
        await morePolls(2);
      }
    };

    await idleSpan();
    t.deepEqual(socketLines('failed'), [], 'the first subscription is not dropped');
    t.deepEqual(follower.counters().webSocket, { subscriptions: 1, failures: 0, heads: 0 });
    await paymentPublished(8);
    await waitUntil('the block announced over the websocket', () => follower.counters().webSocket.heads === 1);

    // The socket falls silent and the chain moves on (polling reads the block), then the socket
    // breaks: the next subscription starts at a head it never announced, on a chain that stays idle.
    relay.holdAll();
    await paymentPublished(8);
    relay.cutAll();
    await waitUntil(
      'the websocket again',
      () => socketLines('new heads from').length === 2 && follower.status().headSource === 'websocket',
    );
    await idleSpan();
    t.is(socketLines('failed').length, 1, `only the cut, not the quiet: ${socketLines('failed').join(' | ')}`);
    t.deepEqual(follower.counters().webSocket, { subscriptions: 2, failures: 1, heads: 1 });
    await paymentPublished(8);
    await waitUntil('the block announced over the new subscription', () => follower.counters().webSocket.heads === 2);
    t.is(follower.status().headSource, 'websocket');
  },
);

test.serial(
  'a WebSocket that falls silent while blocks are mined is stalled once a block polling saw goes unannounced for a heartbeat; polling takes over',
  async (t) => {
    const { follower, lines, relay, clock, morePolls, paymentPublished } = await setUpRelayedSocket(t, {
      webSocketRetryMs: 60_000,
    });
    relay.holdAll();
    // Only the heartbeat polls can bring this block in: the socket announces nothing now.
    const unannounced = await paymentPublished(9);
    await morePolls(2);
    t.is(follower.status().headSource, 'websocket', 'not a heartbeat yet on the follower clock');
    clock.at += heartbeatMs;
    await waitUntil('polling', () => follower.status().headSource === 'polling');
    t.true(
      lines.some((line) =>
        line.includes(
          `stalled: block ${unannounced.blockNumber} was seen over HTTP ${heartbeatMs} ms ago and is still not announced`,
        ),
      ),
      lines.join('\n'),
    );
    t.like(follower.counters().webSocket, { subscriptions: 1, failures: 1 });
    await paymentPublished(9);
    t.is(follower.status().headSource, 'polling');
  },
);

test.serial(
  'two followers of one network share nothing: stopping one leaves the other following over the same WebSocket',
  async (t) => {
    const first = setUp(t, { http: [hardhat().node.rpcUrl], ws: [hardhat().node.wsUrl] }, { pollIntervalMs: 60_000 });
    const second = setUp(t, { http: [hardhat().node.rpcUrl], ws: [hardhat().node.wsUrl] }, { pollIntervalMs: 60_000 });
    await first.follower.start();
    await second.follower.start();
    await waitUntil(
      'both websockets',
      () => first.follower.status().headSource === 'websocket' && second.follower.status().headSource === 'websocket',
    );
    await waitUntil(
      'both started',
      () => first.follower.status().processed !== null && second.follower.status().processed !== null,
    );
    await first.follower.stop();
    await second.paymentPublished(6);
    t.is(second.follower.status().headSource, 'websocket');
  },
);

test.serial(
  'caughtUpAt: the clock time of the newest head read and processed through; it stands still while blocks cannot be read',
  async (t) => {
    let lagging = false;
    const proxy = await startRpcProxy(hardhat().node.rpcUrl, (call) =>
      lagging && call.method === 'eth_getBlockByNumber' ? { code: -32000, message: 'blocks unavailable' } : undefined,
    );
    t.teardown(() => proxy.close());
    let now = Date.parse('2026-06-01T10:00:00.000Z');
    const caughtUp: number[] = [];
    const { follower } = setUp(
      t,
      { http: [proxy.url], ws: [] },
      { clock: { now: () => now }, maxBackoffMs: 100, onCaughtUp: (at) => caughtUp.push(at) },
    );
    t.is(follower.status().caughtUpAt, null);
    await follower.start();
    await waitUntil('the first head processed', () => follower.status().caughtUpAt !== null);
    t.is(follower.status().caughtUpAt, now);
    const before = now;

    // The endpoint gives heads but no blocks: the follower hears of a new block, cannot read it, and is not caught up at the new time.
    // The block is mined before the clock moves: a poll in between would rightly read the old head,
    // processed through, as caught up at the new time.
    lagging = true;
    const paid = await hardhat().sendNative({ fromAccount: 7, to: randomAddress(), value: 1n });
    now += 60_000;
    await waitUntil(
      'the new head heard',
      () => (follower.status().head ?? 0n) >= BigInt(paid.blockNumber) && follower.counters().errors >= 2,
    );
    t.true((follower.status().processed ?? 0n) < BigInt(paid.blockNumber));
    t.is(follower.status().caughtUpAt, before);

    lagging = false;
    await waitUntil('the block read', () => (follower.status().processed ?? 0n) >= BigInt(paid.blockNumber));
    t.is(follower.status().caughtUpAt, now);
    t.deepEqual(caughtUp, [before, now]);
  },
);

test('bad configuration is refused at once, naming the field', (t) => {
  const base = {
    network: {
      network: 'devnet',
      chainId: 31337,
      confirmations: 1,
      tokens: [],
      nativeSymbol: 'ETH',
      nativeDecimals: 18,
    },
    rpc: { http: ['http://127.0.0.1:8545'], ws: [] },
    bus: createInProcessBus(),
    watched: createWatchedAddresses(),
    checkpoints: createInMemoryCheckpointStore(),
  } satisfies EvmFollowerDeps;
  t.throws(() => createEvmFollower({ ...base, rpc: { http: [], ws: [] } }), {
    name: 'EvmFollowerConfigError',
    message: /rpc\.http/,
  });
  t.throws(() => createEvmFollower({ ...base, rpc: { http: ['ws://127.0.0.1:1'], ws: [] } }), {
    name: 'EvmFollowerConfigError',
    message: /rpc\.http\[0\]/,
  });
  t.throws(() => createEvmFollower({ ...base, network: { ...base.network, confirmations: 0 } }), {
    name: 'EvmFollowerConfigError',
    message: /confirmations/,
  });
  t.throws(
    () =>
      createEvmFollower({
        ...base,
        network: { ...base.network, tokens: [{ address: '0x12', symbol: 'X', decimals: 6 }] },
      }),
    { name: 'EvmFollowerConfigError', message: /tokens\[0\]\.address/ },
  );
  t.throws(() => createEvmFollower({ ...base, maxLogRange: 0n }), {
    name: 'EvmFollowerConfigError',
    message: /maxLogRange/,
  });
  t.notThrows(() =>
    createEvmFollower({
      ...base,
      network: { ...base.network, tokens: [{ address: 'native', symbol: 'ETH', decimals: 18 }] },
    }),
  );
});
