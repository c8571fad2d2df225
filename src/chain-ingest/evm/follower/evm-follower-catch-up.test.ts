import test from 'ava';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseUnits, type Address } from 'viem';
import { createInProcessBus } from '../../../bus/in-process-bus.ts';
import { chainMessageId, type ChainTransferMessage } from '../../chain-messages.ts';
import { createWatchedAddresses } from '../../watched-addresses.ts';
import { createEvmFollower, type EvmFollowerDeps } from './evm-follower.ts';
import { createFileCheckpointStore } from './file-checkpoint-store.ts';
import {
  randomAddress,
  spyOnPublishes,
  startTestChain,
  transfersIn,
  waitUntil,
  type Mined,
  type TestChain,
} from './follower-test-kit.ts';

let chain: TestChain | undefined;

test.before(async () => {
  chain = await startTestChain();
});

test.after.always(async () => {
  await chain?.stop();
});

const network = 'hardhat-catch-up';

test('catch-up after downtime: ~300 blocks from a stored checkpoint, eth_getLogs in ranges of 50, everything published exactly once and in order', async (t) => {
  if (chain === undefined) throw new Error('the hardhat node did not start: see test.before');
  const node = chain;
  const dir = await mkdtemp(join(tmpdir(), 'weir-follower-catch-up-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const usdc = await node.deployToken('USDC', 6);
  await node.mintToken({
    token: usdc,
    to: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266',
    amount: parseUnits('1000000', 6),
  });

  const watched = createWatchedAddresses();
  const payees: Address[] = [randomAddress(), randomAddress(), randomAddress()];
  for (const payee of payees) watched.add(network, payee);
  const confirmations = 5;
  const follower = (bus: EvmFollowerDeps['bus']) =>
    createEvmFollower({
      network: {
        network,
        chainId: node.node.chainId,
        confirmations,
        tokens: [{ address: usdc, symbol: 'USDC', decimals: 6 }],
        nativeSymbol: 'ETH',
        nativeDecimals: 18,
      },
      rpc: { http: [node.node.rpcUrl], ws: [node.node.wsUrl] },
      bus,
      watched,
      checkpoints: createFileCheckpointStore(dir),
      maxLogRange: 50n,
      pollIntervalMs: 50,
      log: (line) => t.log(line),
    });

  // Before the downtime: follow for a while, then stop.
  const before = spyOnPublishes(createInProcessBus());
  const first = follower(before.bus);
  await first.start();
  await waitUntil('the first follower to start', () => first.status().processed !== null);
  const early = await node.sendNative({ fromAccount: 1, to: payees[0]!, value: 1n });
  await waitUntil('the early payment', () =>
    transfersIn(before.publications).find((transfer) => transfer.transactionHash === early.hash),
  );
  await first.stop();
  const stoppedAt = Number(first.status().processed);

  // The downtime: 15 rounds of a native payment, a token payment, an unwatched payment and 17 empty blocks.
  const expected: { mined: Mined; logIndex: number }[] = [];
  for (let round = 0; round < 15; round++) {
    expected.push({
      mined: await node.sendNative({
        fromAccount: 1 + (round % 5),
        to: payees[round % 3]!,
        value: BigInt(1_000 + round),
      }),
      logIndex: -1,
    });
    expected.push({
      mined: await node.sendToken({
        fromAccount: 0,
        token: usdc,
        to: payees[(round + 1) % 3]!,
        amount: BigInt(2_000 + round),
      }),
      logIndex: 0,
    });
    await node.sendNative({ fromAccount: 6, to: randomAddress(), value: 1n });
    await node.mine(17);
  }
  const head = await node.blockNumber();
  t.true(head - stoppedAt >= 300, `${head - stoppedAt} blocks of downtime`);

  // The restart, from the checkpoint file.
  const bus = createInProcessBus();
  t.teardown(() => bus.close());
  const after = spyOnPublishes(bus);
  const second = follower(after.bus);
  t.teardown(() => second.stop());
  await second.start();
  await waitUntil('the follower to catch up', () => second.status().processed === BigInt(head), 60_000);
  await node.mine(confirmations);
  const lastHeight = expected.at(-1)!.mined.blockNumber;
  await waitUntil(
    'every final',
    () => after.publications.some(({ message }) => message.type === 'final' && message.blockNumber === lastHeight),
    30_000,
  );

  const transfers = transfersIn(after.publications);
  t.deepEqual(
    transfers.map((transfer) => `${transfer.transactionHash}:${transfer.logIndex}`),
    expected.map(({ mined, logIndex }) => `${mined.hash}:${logIndex}`),
    'every transfer of the downtime, in chain order, and not the one published before it',
  );
  const ids = after.publications.map((publication) => publication.messageId);
  t.is(new Set(ids).size, ids.length, 'no message published twice');
  for (const [index, transfer] of transfers.entries()) {
    t.is(transfer.blockHash, expected[index]!.mined.blockHash);
  }
  t.deepEqual(
    transfers.map((transfer: ChainTransferMessage) => transfer.amount),
    expected.map((_, index) => String(index % 2 === 0 ? 1_000 + index / 2 : 2_000 + (index - 1) / 2)),
  );

  // One final per height with transfers, after its transfers; the first is the early payment's,
  // owed since before the downtime (it had not reached 5 confirmations when the follower stopped).
  const heights = [early.blockNumber, ...new Set(expected.map(({ mined }) => mined.blockNumber))];
  const finals = after.publications.flatMap((publication, index) =>
    publication.message.type === 'final' ? [{ index, message: publication.message }] : [],
  );
  t.deepEqual(
    finals.map(({ message }) => message.blockNumber),
    heights,
  );
  for (const { index, message } of finals) {
    const lastTransferAt = after.publications.findLastIndex(
      ({ message: m }) => m.type === 'transfer' && m.blockNumber === message.blockNumber,
    );
    t.true(lastTransferAt < index, `final ${message.blockNumber} after its transfers`);
    t.is(
      message.blockHash,
      [{ mined: early }, ...expected].find(({ mined }) => mined.blockNumber === message.blockNumber)!.mined.blockHash,
    );
    t.is(chainMessageId(message), `final:${network}:${message.blockHash}`);
  }
  t.false(after.publications.some(({ message }) => message.type === 'reorg'));

  const counters = second.counters();
  const blocks = head + confirmations - stoppedAt;
  t.log(
    `blocks read: ${counters.blocksRead} for ${blocks} new blocks; rpc calls: ${JSON.stringify(counters.rpc.calls)}; http requests: ${counters.rpc.httpRequests}`,
  );
  t.true((counters.rpc.calls.eth_getLogs ?? 0) >= Math.ceil(300 / 50));
  t.true(
    (counters.rpc.calls.eth_getLogs ?? 0) <= Math.ceil(blocks / 50) + confirmations + 6,
    'about one eth_getLogs per 50 blocks while catching up',
  );
  t.true(
    counters.rpc.httpRequests < (counters.rpc.calls.eth_getBlockByNumber ?? 0) / 4,
    'blocks are read in JSON-RPC batches',
  );
  t.is(second.status().pendingFinal, 0);
});
