import test from 'ava';
import { parseCheckpoint } from './checkpoint.ts';
import {
  checkLinks,
  checkpointOf,
  dueFinals,
  dueUnreadFinals,
  finalThrough,
  initialState,
  markProcessed,
  oweFinal,
  pendingFinalCount,
  recordBlocks,
  removeAbove,
  settleFinals,
  stateFromCheckpoint,
  type BlockLink,
  type FollowerState,
} from './follower-state.ts';

// Block hashes: `h(10)` on the first branch, `h(10, 'b')` on another one.
const h = (number: number, branch = 'a'): string => `0x${branch.repeat(2)}${number.toString(16).padStart(62, '0')}`;
const block = (number: number, branch = 'a', parentBranch = branch): BlockLink => ({
  number,
  hash: h(number, branch),
  parentHash: h(number - 1, parentBranch),
});
const withTransfers = (link: BlockLink, transfers = false) => ({ ...link, transfers });

function processed(state: FollowerState, blocks: BlockLink[], transfersAt: number[] = []): FollowerState {
  const recorded = recordBlocks(
    state,
    blocks.map((link) => withTransfers(link, transfersAt.includes(link.number))),
  );
  return markProcessed(recorded, blocks.at(-1)!.number);
}

test('blocks that continue the window are linked; a first block with another parent is a reorg', (t) => {
  const state = processed(initialState(10), [block(10), block(11)]);
  t.deepEqual(checkLinks(state, [block(12), block(13)]), { type: 'linked', count: 2 });
  t.deepEqual(checkLinks(state, [block(12, 'b', 'b')]), { type: 'reorg', atBlock: 12 });
  // Read blocks that stop chaining among themselves: only the consistent prefix counts.
  t.deepEqual(checkLinks(state, [block(12), block(13, 'b', 'b')]), { type: 'linked', count: 1 });
  // With nothing processed yet, the first block is taken as it is.
  t.deepEqual(checkLinks(initialState(10), [block(10, 'z', 'y')]), { type: 'linked', count: 1 });
});

test('a block read before (in flight at a crash) that comes back with another hash is a reorg', (t) => {
  const inFlight = recordBlocks(processed(initialState(10), [block(10)]), [withTransfers(block(11), true)]);
  t.is(inFlight.nextBlock, 11);
  t.deepEqual(checkLinks(inFlight, [block(11)]), { type: 'linked', count: 1 }, 'the same block again is fine');
  t.deepEqual(checkLinks(inFlight, [block(11, 'b', 'a')]), { type: 'reorg', atBlock: 11 });
});

test('finality: head - number + 1 >= confirmations over processed blocks, only heights with transfers, each once', (t) => {
  let state = processed(initialState(100), [block(100), block(101), block(102)], [100, 102]);
  t.is(finalThrough(state, 3), 100);
  t.deepEqual(
    dueFinals(state, 3).map((entry) => entry.number),
    [100],
  );
  state = settleFinals(state, 3, [100]);
  t.deepEqual(dueFinals(state, 3), []);
  t.deepEqual(
    state.window.map((entry) => entry.number),
    [100, 101, 102],
    'the newest final block stays as the anchor',
  );
  t.is(pendingFinalCount(state), 1);

  state = processed(state, [block(103), block(104)]);
  t.deepEqual(
    dueFinals(state, 3).map((entry) => entry.number),
    [102],
  );
  state = settleFinals(state, 3, [102]);
  t.deepEqual(
    state.window.map((entry) => entry.number),
    [102, 103, 104],
  );
  t.is(pendingFinalCount(state), 0);
});

test('with one confirmation a block is final as soon as it is processed, and the window keeps just the anchor', (t) => {
  let state = processed(initialState(7), [block(7), block(8)], [7, 8]);
  t.deepEqual(
    dueFinals(state, 1).map((entry) => entry.number),
    [7, 8],
  );
  state = settleFinals(state, 1, [7, 8]);
  t.deepEqual(
    state.window.map((entry) => entry.number),
    [8],
  );
});

test('a final that could not be published keeps its block (and the window stays consecutive)', (t) => {
  let state = processed(initialState(1), [block(1), block(2), block(3), block(4), block(5)], [2]);
  state = settleFinals(state, 2, []);
  t.deepEqual(
    state.window.map((entry) => entry.number),
    [2, 3, 4, 5],
  );
  t.deepEqual(
    dueFinals(state, 2).map((entry) => entry.number),
    [2],
  );
});

test('removeAbove drops the blocks above the ancestor, rewinds and remembers orphaned heights with transfers', (t) => {
  const state = processed(initialState(50), [block(50), block(51), block(52), block(53)], [52]);
  const { state: rewound, removed } = removeAbove(state, 51);
  t.deepEqual(
    removed.map((entry) => entry.number),
    [52, 53],
  );
  t.is(rewound.nextBlock, 52);
  t.deepEqual(rewound.orphanedHeights, [52]);
  t.deepEqual(
    rewound.window.map((entry) => entry.number),
    [50, 51],
  );
  t.is(pendingFinalCount(rewound), 1);

  // The new branch's block at 52 inherits the owed final, even without transfers of its own.
  const replaced = processed(rewound, [block(52, 'b', 'a'), block(53, 'b')]);
  t.deepEqual(replaced.orphanedHeights, []);
  t.like(
    replaced.window.find((entry) => entry.number === 52),
    { hash: h(52, 'b'), transfers: true },
  );
  t.deepEqual(
    dueFinals(replaced, 2).map((entry) => ({ number: entry.number, hash: entry.hash })),
    [{ number: 52, hash: h(52, 'b') }],
  );
});

test('removeAbove with no common ancestor (deeper than the window) removes everything and restarts at the oldest kept height', (t) => {
  const state = processed(initialState(20), [block(20), block(21)], [21]);
  const { state: rewound, removed } = removeAbove(state, null);
  t.deepEqual(
    removed.map((entry) => entry.number),
    [20, 21],
  );
  t.is(rewound.nextBlock, 20);
  t.deepEqual(rewound.window, []);
  t.deepEqual(rewound.orphanedHeights, [21]);
});

test('removeAbove also drops in-flight blocks above the processed one', (t) => {
  const inFlight = recordBlocks(processed(initialState(5), [block(5), block(6)]), [
    withTransfers(block(7), true),
    withTransfers(block(8)),
  ]);
  const { state: rewound, removed } = removeAbove(inFlight, 6);
  t.deepEqual(
    removed.map((entry) => entry.number),
    [7, 8],
  );
  t.is(rewound.nextBlock, 7);
  t.deepEqual(rewound.orphanedHeights, [7]);
});

test('recordBlocks refuses blocks that do not start at nextBlock or are not consecutive', (t) => {
  const state = initialState(10);
  t.throws(() => recordBlocks(state, [withTransfers(block(11))]), { instanceOf: RangeError });
  t.throws(() => recordBlocks(state, [withTransfers(block(10)), withTransfers(block(12))]), { instanceOf: RangeError });
});

test('the checkpoint round-trips the state', (t) => {
  const state = removeAbove(processed(initialState(3), [block(3), block(4), block(5)], [5]), 4).state;
  const checkpoint = checkpointOf(state, { network: 'devnet', chainId: 31337, now: new Date('2026-01-01T00:00:00Z') });
  t.like(checkpoint, {
    version: 1,
    network: 'devnet',
    chainId: 31337,
    nextBlock: 5,
    lastProcessed: { number: 4, hash: h(4) },
    orphanedHeights: [5],
    updatedAt: '2026-01-01T00:00:00.000Z',
  });
  t.deepEqual(stateFromCheckpoint(checkpoint), state);
});

test("a recovered transfer in a block the window holds owes that block a final, as the follower's own transfers do; owing it twice changes nothing", (t) => {
  let state = processed(initialState(30), [block(30), block(31), block(32)]);
  state = oweFinal(state, 31);
  t.like(
    state.window.find((entry) => entry.number === 31),
    { transfers: true, finalPublished: false },
  );
  t.deepEqual(oweFinal(state, 31), state);
  t.is(pendingFinalCount(state), 1);
  t.deepEqual(dueFinals(state, 3), [], 'not final with 2 of 3 blocks');
  state = processed(state, [block(33)]);
  t.deepEqual(
    dueFinals(state, 3).map((entry) => entry.number),
    [31],
  );
  t.deepEqual(
    settleFinals(state, 3, [31]).window.map((entry) => entry.number),
    [31, 32, 33],
  );

  // If its block leaves the chain, the height stays owed like any height with transfers, and the reorg names the block.
  const { state: rewound, removed } = removeAbove(
    oweFinal(processed(initialState(30), [block(30), block(31), block(32)]), 31),
    30,
  );
  t.deepEqual(
    removed.map((entry) => entry.number),
    [31, 32],
  );
  t.deepEqual(rewound.orphanedHeights, [31]);
});

test('a recovered transfer at or beyond nextBlock owes the height a final that its block takes when it is read', (t) => {
  let state = oweFinal(processed(initialState(40), [block(40)]), 42);
  t.deepEqual(state.orphanedHeights, [42]);
  t.deepEqual(dueUnreadFinals(state, 1), [], 'not read yet: marked when read');
  state = processed(state, [block(41), block(42)]);
  t.deepEqual(state.orphanedHeights, []);
  t.like(
    state.window.find((entry) => entry.number === 42),
    { transfers: true },
  );
  t.deepEqual(
    dueFinals(state, 1).map((entry) => entry.number),
    [42],
  );

  // A block in flight (recorded at a crash, read again after it) keeps the owed final too.
  const inFlight = oweFinal(recordBlocks(processed(initialState(70), [block(70)]), [withTransfers(block(71))]), 71);
  t.deepEqual(inFlight.orphanedHeights, [71]);
  t.like(
    processed(inFlight, [block(71)]).window.find((entry) => entry.number === 71),
    { transfers: true },
  );
});

test("a recovered transfer below the window (before the follower's first block) is owed a final once the height is final, then settled; it survives the checkpoint", (t) => {
  let state = processed(initialState(60), [block(60), block(61)]);
  state = oweFinal(oweFinal(state, 58), 57);
  t.deepEqual(state.orphanedHeights, [57, 58]);
  t.is(pendingFinalCount(state), 2);
  const checkpoint = checkpointOf(state, { network: 'devnet', chainId: 31337, now: new Date('2026-01-01T00:00:00Z') });
  t.deepEqual(stateFromCheckpoint(parseCheckpoint(JSON.parse(JSON.stringify(checkpoint)), 'devnet', 'test')), state);

  t.deepEqual(dueUnreadFinals(state, 5), [57], '62 - 5 = 57 is the highest final height');
  t.deepEqual(dueFinals(state, 5), []);
  state = settleFinals(state, 5, [57]);
  t.deepEqual(state.orphanedHeights, [58]);
  t.deepEqual(dueUnreadFinals(state, 5), []);
  state = processed(state, [block(62)]);
  t.deepEqual(dueUnreadFinals(state, 5), [58]);
  state = settleFinals(state, 5, [58]);
  t.deepEqual(state.orphanedHeights, []);
  t.is(pendingFinalCount(state), 0);
});

test('a transaction final owed after its block final went out survives the checkpoint, and a reorg of its block owes the height instead', (t) => {
  const tx = `0x${'7'.repeat(64)}`;
  let state = processed(initialState(30), [block(30), block(31), block(32)], [31]);
  state = settleFinals(state, 2, [31]);
  state = oweFinal(state, 31, tx);
  t.like(
    state.window.find((entry) => entry.number === 31),
    { finalPublished: true },
    'the block final is not owed again',
  );
  t.deepEqual(state.transactionFinals, [{ number: 31, hash: h(31), transactionHash: tx }]);
  t.is(pendingFinalCount(state), 1);
  const checkpoint = checkpointOf(state, { network: 'devnet', chainId: 31337, now: new Date('2026-01-01T00:00:00Z') });
  t.deepEqual(stateFromCheckpoint(parseCheckpoint(JSON.parse(JSON.stringify(checkpoint)), 'devnet', 'test')), state);
  const { state: rewound } = removeAbove(state, 30);
  t.is(rewound.transactionFinals, undefined);
  t.deepEqual(rewound.orphanedHeights, [31]);
});
