import test from 'ava';
import { chainMessageId, type ChainTransferMessage } from '../../chain-messages.ts';
import { createWatchedAddresses } from '../../watched-addresses.ts';
import { initialState, markProcessed, oweFinal, recordBlocks, type FollowerState } from './follower-state.ts';
import type { BlockWithTransactions } from './get-blocks.ts';
import type { TokenTransferLog } from './get-transfer-logs.ts';
import { findAncestor, syncBatch, syncFinals, syncReorg, tipReplaced, type SyncContext } from './sync-step.ts';

// Block hashes: `h(10)` on the first branch, `h(10, 'b')` on another one.
const h = (number: number, branch = 'a'): string => `0x${branch.repeat(2)}${number.toString(16).padStart(62, '0')}`;
const TOKEN = '0x00000000000000000000000000000000000a11ce';
const PAYER = '0x1111111111111111111111111111111111111111';
const DEPOSIT = '0x2222222222222222222222222222222222222222';

const block = (number: number, branch = 'a', parentBranch = branch): BlockWithTransactions => ({
  number,
  hash: h(number, branch),
  parentHash: h(number - 1, parentBranch),
  transactions: [],
  logsBloom: null,
});
const tokenLog = (number: number, branch = 'a'): TokenTransferLog => ({
  blockNumber: number,
  blockHash: h(number, branch),
  transactionHash: `0x${'cd'.repeat(31)}${number.toString(16).padStart(2, '0')}`,
  transactionIndex: 0,
  logIndex: 0,
  token: TOKEN,
  from: PAYER,
  to: DEPOSIT,
  value: 1_000_000n,
});

function context(confirmations = 3): SyncContext {
  const watched = createWatchedAddresses();
  watched.add('testnet', DEPOSIT);
  return {
    network: 'testnet',
    chainId: 7357,
    confirmations,
    nativeAsset: { address: 'native', symbol: 'ETH', decimals: 18 },
    tokens: [{ address: TOKEN, symbol: 'USDC', decimals: 6 }],
    watched,
    observedAt: '2026-11-28T00:00:00.000Z',
  };
}

const batchOf = (blocks: BlockWithTransactions[], logs: TokenTransferLog[] = [], to = blocks.at(-1)!.number) => ({
  from: blocks[0]!.number,
  to,
  blocks,
  logs,
  receipts: new Map(),
});

function processedThrough(state: FollowerState, blocks: BlockWithTransactions[], transfersAt: number[] = []) {
  const recorded = recordBlocks(
    state,
    blocks.map((b) => ({
      number: b.number,
      hash: b.hash,
      parentHash: b.parentHash,
      transfers: transfersAt.includes(b.number),
    })),
  );
  return markProcessed(recorded, blocks.at(-1)!.number);
}

test('a batch with a transfer: write-ahead state first, the transfer, then the processed state', (t) => {
  const outcome = syncBatch(initialState(10), batchOf([block(10), block(11), block(12)], [tokenLog(11)]), context());
  if (outcome.type !== 'processed') return t.fail(`expected processed, got ${outcome.type}`);
  t.is(outcome.through, 12);
  const { writeAhead, events, state } = outcome.plan;
  t.is(writeAhead?.nextBlock, 10, 'the write-ahead checkpoint names the blocks but has not passed them');
  t.deepEqual(
    writeAhead?.window.map((b) => [b.number, b.transfers]),
    [
      [10, false],
      [11, true],
      [12, false],
    ],
  );
  t.deepEqual(
    events.map((e) => e.type),
    ['transfer'],
  );
  const transfer = events[0]!.message as ChainTransferMessage;
  t.is(transfer.blockNumber, 11);
  t.is(transfer.amount, '1000000');
  t.is(events[0]!.state.nextBlock, 13, 'once the last transfer is out the batch is processed');
  t.is(state.nextBlock, 13);
});

test('a batch without transfers saves no write-ahead checkpoint and publishes nothing', (t) => {
  const outcome = syncBatch(initialState(10), batchOf([block(10), block(11)]), context());
  if (outcome.type !== 'processed') return t.fail(`expected processed, got ${outcome.type}`);
  t.is(outcome.plan.writeAhead, null);
  t.deepEqual(outcome.plan.events, []);
  t.is(outcome.plan.state.nextBlock, 12);
});

test('final: a height with a transfer is final once `confirmations` processed blocks count it, and only once', (t) => {
  const ctx = context(3);
  const first = syncBatch(initialState(10), batchOf([block(10), block(11)], [tokenLog(10)]), ctx);
  if (first.type !== 'processed') return t.fail();
  t.deepEqual(
    first.plan.events.map((e) => e.type),
    ['transfer'],
    'two blocks processed: block 10 has 2 confirmations of 3',
  );
  const second = syncBatch(first.plan.state, batchOf([block(12), block(13)]), ctx);
  if (second.type !== 'processed') return t.fail();
  t.deepEqual(
    second.plan.events.map((e) => [e.type, e.message.type === 'final' ? e.message.blockNumber : null]),
    [['final', 10]],
  );
  t.true(second.plan.state.window.find((b) => b.number === 10)?.finalPublished ?? true);
  const third = syncBatch(second.plan.state, batchOf([block(14)]), ctx);
  if (third.type !== 'processed') return t.fail();
  t.deepEqual(third.plan.events, [], 'no second final for the same height');
});

test('reorg: a batch whose first block does not continue the window asks for the ancestor; the reorg names every block above it', async (t) => {
  const ctx = context(5);
  const state = processedThrough(initialState(10), [block(10), block(11), block(12)], [11]);
  const outcome = syncBatch(state, batchOf([block(13, 'b', 'b')]), ctx);
  t.deepEqual(outcome, { type: 'reorg', atBlock: 13 });
  // The endpoint's chain: 10 on the old branch, 11.. on branch b.
  const canonical = async (number: number) => (number <= 10 ? h(number) : h(number, 'b'));
  const ancestor = await findAncestor(state, canonical);
  t.is(ancestor, 10);
  const step = syncReorg(state, ancestor, ctx);
  if (step === null) return t.fail();
  t.false(step.deep);
  t.is(step.plan.events.length, 1);
  const [reorg] = step.plan.events;
  t.is(reorg?.type, 'reorg');
  if (reorg?.type !== 'reorg') return;
  t.deepEqual(
    reorg.message.removedBlocks.map((b) => b.number),
    [11, 12],
  );
  t.is(step.plan.state.nextBlock, 11);
  t.deepEqual(step.plan.state.orphanedHeights, [11], 'the orphaned transfer height still owes a final');
});

test('reorg: nothing known replaced (the endpoint serves blocks that do not chain) is no reorg', (t) => {
  const state = processedThrough(initialState(10), [block(10)]);
  t.is(syncReorg(state, 10, context()), null);
});

test('reorg below a final window is flagged deep', (t) => {
  const ctx = context(1);
  const state = processedThrough(initialState(10), [block(10), block(11)]);
  const step = syncReorg(state, null, ctx);
  t.true(step?.deep);
});

test('a head announced at a processed height with another hash is a same-height reorg', (t) => {
  const state = processedThrough(initialState(10), [block(10), block(11)]);
  t.true(tipReplaced(state, { number: 11, hash: h(11, 'b') }));
  t.false(tipReplaced(state, { number: 11, hash: h(11) }));
  t.false(tipReplaced(state, { number: 12, hash: h(12, 'b') }), 'above the processed height: read it first');
});

test('blocks that stop chaining part way are processed up to the break', (t) => {
  const outcome = syncBatch(initialState(10), batchOf([block(10), block(11), block(12, 'b', 'b')]), context());
  if (outcome.type !== 'processed') return t.fail();
  t.is(outcome.through, 11);
  t.is(outcome.plan.state.nextBlock, 12);
});

test('an empty batch waits; a log of another block version is refused', (t) => {
  t.deepEqual(syncBatch(initialState(10), { from: 10, to: 12, blocks: [], logs: [], receipts: new Map() }, context()), {
    type: 'waiting',
  });
  t.throws(() => syncBatch(initialState(10), batchOf([block(10)], [tokenLog(10, 'b')]), context()), {
    message: /eth_getLogs saw block/,
  });
});

test('native transfers to a watched address need their receipts: missing ones are asked for, reverted ones are not credited', (t) => {
  const paying: BlockWithTransactions = {
    ...block(10),
    transactions: [
      { hash: h(1, 'c'), transactionIndex: 0, from: PAYER, to: DEPOSIT, value: 5n },
      { hash: h(2, 'c'), transactionIndex: 1, from: PAYER, to: DEPOSIT, value: 7n },
    ],
  };
  const ctx = context();
  t.deepEqual(syncBatch(initialState(10), batchOf([paying]), ctx), {
    type: 'receipts-missing',
    transactionHashes: [h(1, 'c'), h(2, 'c')],
  });
  const receipts = new Map([
    [h(1, 'c'), { transactionHash: h(1, 'c'), blockHash: h(10), blockNumber: 10, succeeded: true }],
    [h(2, 'c'), { transactionHash: h(2, 'c'), blockHash: h(10), blockNumber: 10, succeeded: false }],
  ]);
  const outcome = syncBatch(initialState(10), { ...batchOf([paying]), receipts }, ctx);
  if (outcome.type !== 'processed') return t.fail();
  t.deepEqual(
    outcome.plan.events.map((e) => (e.message as ChainTransferMessage).amount),
    ['5'],
  );
});

test('finals of recovered heights the follower never read name the canonical block read there; without it they stay owed', (t) => {
  const ctx = context(2);
  const state = oweFinal(processedThrough(initialState(10), [block(10), block(11), block(12)]), 5);
  const waiting = syncFinals(state, ctx);
  t.deepEqual(waiting.events, []);
  t.deepEqual(waiting.state.orphanedHeights, [5]);
  const done = syncFinals(state, ctx, new Map([[5, h(5, 'z')]]));
  t.deepEqual(
    done.events.map((e) => [e.type, e.message.type === 'final' ? e.message.blockHash : null]),
    [['final', h(5, 'z')]],
  );
  t.deepEqual(done.state.orphanedHeights, []);
});

test('a succeeded receipt whose value is not the native coin (a TRC-10 transfer) is not credited as native coin', (t) => {
  const paying: BlockWithTransactions = {
    ...block(10),
    transactions: [
      { hash: h(1, 'c'), transactionIndex: 0, from: PAYER, to: DEPOSIT, value: 5n },
      { hash: h(2, 'c'), transactionIndex: 1, from: PAYER, to: DEPOSIT, value: 7n },
    ],
  };
  const receipts = new Map([
    [h(1, 'c'), { transactionHash: h(1, 'c'), blockHash: h(10), blockNumber: 10, succeeded: true }],
    [
      h(2, 'c'),
      { transactionHash: h(2, 'c'), blockHash: h(10), blockNumber: 10, succeeded: true, nonNativeValue: true },
    ],
  ]);
  const outcome = syncBatch(initialState(10), { ...batchOf([paying]), receipts }, context());
  if (outcome.type !== 'processed') return t.fail();
  t.deepEqual(
    outcome.plan.events.map((e) => (e.message as ChainTransferMessage).amount),
    ['5'],
  );
});

test('a recovered transfer in a block whose final already went out gets a final of its own transaction, not the same final again (which the bus drops as a duplicate)', (t) => {
  const ctx = context(2);
  const tx = `0x${'7'.repeat(64)}`;
  let state = processedThrough(initialState(10), [block(10), block(11), block(12)], [11]);
  const first = syncFinals(state, ctx);
  t.deepEqual(
    first.events.map((e) => (e.message.type === 'final' ? e.message.blockNumber : null)),
    [11],
  );
  const blockFinalId = chainMessageId(first.events[0]!.message);
  state = oweFinal(first.state, 11, tx);
  // Owed twice (the recovery asked again): still one final.
  state = oweFinal(state, 11, tx);
  const again = syncFinals(state, ctx);
  t.is(again.events.length, 1);
  const message = again.events[0]!.message;
  t.like(message, { type: 'final', blockNumber: 11, blockHash: h(11), transactionHash: tx });
  t.not(chainMessageId(message), blockFinalId, 'another message id than the block final published before');
  t.deepEqual(syncFinals(again.state, ctx).events, [], 'published once');

  // Below the window the follower cannot tell whether it published that height's final (it never
  // read a block before its first one): the height is owed a block final, named by the block read there.
  const below = oweFinal(again.state, 3, tx);
  t.deepEqual(below.orphanedHeights, [3]);
  t.is(below.transactionFinals, undefined);
});
