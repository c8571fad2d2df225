import test, { type ExecutionContext } from 'ava';
import { eventually } from '../../test/support/api-client.ts';
import { chainPublisher, randomHash } from '../../test/support/chain-publisher.ts';
import { recordingClock } from '../../test/support/sweep-events.ts';
import { createMerchant, MERCHANT_WALLET, sessionRequest, startTestWeir } from '../../test/support/weir-harness.ts';
import { TEST_NETWORK } from '../chain-ingest/test-rail.ts';
import { COLLECTIONS, type CheckoutSessionDoc } from '../projections/collections.ts';
import { SWEEPS, type SweepDoc } from '../projections/sweeps.projection.ts';
import { sweepTransactionId, TRANSACTIONS, type TransactionDoc } from '../projections/transactions.projection.ts';
import { createPrometheusMetrics } from '../app/prometheus-metrics.ts';
import { createManualClock } from '../shared/clock.ts';
import type { Metrics } from '../shared/metrics.ts';
import type { CommandHandler } from '../actors/command-handler.ts';
import type { Collection, ReadDocument, ReadStore } from '../read-store/read-store.ts';
import {
  SweepNodeError,
  SweepReceiptLostError,
  SweepRejectedError,
  SweepRevertedError,
  SweepWaitingError,
} from './sweep-errors.ts';
import { createSweeper, type MinedSweep, type SweepExecutor, type SweepRequest, type SweepResult } from './sweeper.ts';

/**
 * A flush the double was asked for: `result` when it swept, `reverted` when mined and reverted,
 * `unmined` when the node has it but it is not mined (yet), `unsent` when it was signed but the
 * node never had it (recording it failed, the node refused it, or the send was lost).
 */
type Flush = {
  depositAddresses: string[];
  result: SweepResult | null;
  reverted?: SweepResult;
  unmined?: SweepResult;
  unsent?: SweepResult;
  sweptNothing?: true;
};

/**
 * How the double answers a flush: sweep, refuse before signing (throws, nothing signed), revert
 * (mined, gas paid), lose the receipt of a mined flush, leave it unmined in the node's pool (until
 * `mineUnmined`), have the node refuse the signed transaction (never sent; `nonceUsed` when
 * another transaction took its nonce), lose the send itself (the node never had it, its
 * outcome not known to the sweeper), or not take it for now (`held`: another pending transaction
 * has its nonce, until `releaseHeld`).
 */
type FlushAnswer =
  | { kind: 'sweep' }
  | { kind: 'refuse'; error: Error }
  | { kind: 'revert' }
  | { kind: 'receiptLost' }
  | { kind: 'unmined' }
  | { kind: 'reject' }
  | { kind: 'nonceUsed' }
  | { kind: 'sendLost' }
  | { kind: 'held' };

/** What the double's node holds of a signed transaction: the deposits it sweeps and what it costs. */
type SignedByDouble = { depositAddresses: string[]; transaction: SweepResult };

/**
 * A test double of the SweepExecutor port: no chain, but each deposit address is funded (by
 * `fund`) or emptied (by a flush mined with it), the node has a pool of transactions sent and not
 * mined, and the transactions mined can be looked up by hash. `answer` decides each flush; one
 * signed is handed to `beforeSend` before anything reaches the node (nothing does if it throws),
 * and is a made-up transaction whose gas does not divide evenly. Records every flush, and marks one
 * that found all its deposits empty (`sweptNothing`: operator gas wasted). A transaction sent again
 * (`rebroadcast`) goes to the pool unless `takeNonceOf` took its nonce.
 */
function createRefusingSweepExecutorDouble() {
  const flushes: Flush[] = [];
  const emptied = new Set<string>();
  const mined = new Map<string, MinedSweep>();
  const signedTransactions = new Map<string, SignedByDouble>();
  const pool = new Map<string, SignedByDouble>();
  const nonceTaken = new Set<string>();
  /** Signed transactions the node does not take for now: another pending transaction has their nonce. */
  const held = new Set<string>();
  /** A signed transaction's hash → the one mined with its nonce in its place, the same call (a copy, as a wallet's speed-up). */
  const minedInPlaceOf = new Map<string, string>();
  const rebroadcasts: { transactionHash: string; signed: boolean; answer: string }[] = [];
  /** Whether the node forgets what it is sent (a provider behind a load balancer, or one evicting it for its fee). */
  let forgets = false;
  let answer: (requests: SweepRequest[]) => FlushAnswer = () => ({ kind: 'sweep' });
  let readFailure: Error | null = null;
  /** The chain's last block: payments and flushes are mined in the blocks after it, in the order they happen. */
  let head = 100;
  const transactionOf = (depositAddresses: string[]): SweepResult => {
    const gasUsed = 100_001n * BigInt(depositAddresses.length) + 3n;
    const transactionHash = `0x${String(flushes.length).padStart(64, '0')}`;
    return { transactionHash, gasUsed, gasCost: gasUsed * 7n };
  };
  /** `transaction` is mined now, in the next block. */
  const mineIn = (transaction: SweepResult) => {
    transaction.blockNumber = BigInt(++head);
  };
  const mineSweep = (depositAddresses: string[], transaction: SweepResult) => {
    mineIn(transaction);
    for (const address of depositAddresses) emptied.add(address);
    mined.set(transaction.transactionHash, { transaction, reverted: false });
    pool.delete(transaction.transactionHash);
  };
  const signedOf = (transactionHash: string) => `signed:${transactionHash}`;
  const executor: SweepExecutor = {
    async funded(requests) {
      if (readFailure) throw readFailure;
      return requests.map((r) => !emptied.has(r.depositAddress));
    },
    async flush(requests, beforeSend) {
      const depositAddresses = requests.map((r) => r.depositAddress);
      const sweptNothing = depositAddresses.every((a) => emptied.has(a)) ? { sweptNothing: true as const } : {};
      const answered = answer(requests);
      if (answered.kind === 'refuse') {
        flushes.push({ depositAddresses, result: null });
        throw answered.error;
      }
      const transaction = transactionOf(depositAddresses);
      const { transactionHash } = transaction;
      signedTransactions.set(transactionHash, { depositAddresses, transaction });
      try {
        await beforeSend({ transactionHash, signedTransaction: signedOf(transactionHash) });
      } catch (error) {
        flushes.push({ depositAddresses, result: null, unsent: transaction });
        throw error;
      }
      if (answered.kind === 'held') {
        held.add(transactionHash);
        flushes.push({ depositAddresses, result: null, unsent: transaction });
        throw new SweepWaitingError(
          `sweep transaction ${transactionHash} was not taken by the node: another pending transaction of the account has its nonce`,
          transactionHash,
        );
      }
      if (answered.kind === 'reject' || answered.kind === 'nonceUsed' || answered.kind === 'sendLost') {
        flushes.push({ depositAddresses, result: null, unsent: transaction });
        if (answered.kind === 'reject') {
          throw new SweepRejectedError(
            `sweep transaction ${transactionHash} was refused by the node, which does not have it: it was never sent (nonce too low)`,
            transactionHash,
          );
        }
        if (answered.kind === 'nonceUsed') {
          throw new SweepRejectedError(
            `sweep transaction ${transactionHash} was refused by the node: its nonce was used by another transaction (nonce too low)`,
            transactionHash,
            { nonceUsed: true },
          );
        }
        throw new SweepReceiptLostError(
          `sweep transaction ${transactionHash} may have been sent: the node did not answer (timed out)`,
          transactionHash,
        );
      }
      if (answered.kind === 'unmined') {
        pool.set(transactionHash, { depositAddresses, transaction });
        flushes.push({ depositAddresses, result: null, unmined: transaction });
        throw new SweepReceiptLostError(
          `sweep transaction ${transactionHash} was sent but its receipt could not be had: timed out`,
          transactionHash,
        );
      }
      if (answered.kind === 'revert') {
        mineIn(transaction);
        mined.set(transactionHash, { transaction, reverted: true });
        flushes.push({ depositAddresses, result: null, reverted: transaction });
        throw new SweepRevertedError(`sweep transaction ${transactionHash} reverted`, transaction);
      }
      mineSweep(depositAddresses, transaction);
      flushes.push({ depositAddresses, result: transaction, ...sweptNothing });
      if (answered.kind === 'receiptLost') {
        throw new SweepReceiptLostError(
          `sweep transaction ${transactionHash} was sent but its receipt could not be had: timed out`,
          transactionHash,
        );
      }
      return transaction;
    },
    async minedSweep(transactionHash, signedTransaction) {
      if (readFailure) throw readFailure;
      const copy = signedTransaction === null ? undefined : minedInPlaceOf.get(transactionHash);
      return mined.get(transactionHash) ?? (copy === undefined ? null : (mined.get(copy) ?? null));
    },
    async rebroadcast(transactionHash, signedTransaction) {
      if (readFailure) throw readFailure;
      const known = mined.has(transactionHash) || pool.has(transactionHash);
      const sent = signedTransactions.get(transactionHash);
      let answered: 'pending' | 'resent' | 'waiting' | 'absent' = 'pending';
      if (!known) {
        if (signedTransaction === null || nonceTaken.has(transactionHash) || !sent) answered = 'absent';
        else if (held.has(transactionHash)) answered = 'waiting';
        else if (signedTransaction !== signedOf(transactionHash))
          throw new Error(`not the transaction ${transactionHash}`);
        else {
          if (!forgets) pool.set(transactionHash, sent);
          answered = 'resent';
        }
      }
      rebroadcasts.push({ transactionHash, signed: signedTransaction !== null, answer: answered });
      return answered;
    },
  };
  /** The next flush answers `next`; those after it sweep. */
  function answerNext(next: FlushAnswer) {
    answer = () => {
      answer = () => ({ kind: 'sweep' });
      return next;
    };
  }
  return {
    executor,
    flushes,
    rebroadcasts,
    /** The block a payment made now is mined in. */
    nextBlock: () => ++head,
    /** The chain's last block. */
    head: () => head,
    /** A payment reached `depositAddress`: it holds something to sweep again. */
    fund(depositAddress: string) {
      emptied.delete(depositAddress);
    },
    /** Someone else flushed `depositAddress` (anyone may): it is empty, and Weir has no record of the transaction. */
    emptyElsewhere(depositAddress: string) {
      emptied.add(depositAddress);
    },
    /** Refuse every flush that contains `depositAddress`, as a merchant wallet rejecting the coin makes the batch revert. */
    refuseDeposit(depositAddress: string) {
      answer = (requests) =>
        requests.some((r) => r.depositAddress === depositAddress)
          ? { kind: 'refuse', error: new Error(`reverted with NativeTransferFailed(${depositAddress})`) }
          : { kind: 'sweep' };
    },
    /** Every flush containing `depositAddress` is mined and reverts: nothing moves, the gas is paid. */
    revertDeposit(depositAddress: string) {
      answer = (requests) =>
        requests.some((r) => r.depositAddress === depositAddress) ? { kind: 'revert' } : { kind: 'sweep' };
    },
    refuseEverything(reason: string) {
      answer = () => ({ kind: 'refuse', error: new Error(reason) });
    },
    /** The node is down: flushes and balance reads fail with the node's error. */
    nodeDown(reason: string) {
      answer = () => ({ kind: 'refuse', error: new SweepNodeError(reason) });
      readFailure = new SweepNodeError(reason);
    },
    /** The next flush is mined but its receipt never comes (its hash is known); the node answers again after. */
    loseNextReceipt() {
      answerNext({ kind: 'receiptLost' });
    },
    /** The next flush is sent but not mined (its receipt is not had) until `mineUnmined`, or never (dropped). */
    leaveNextUnmined() {
      answerNext({ kind: 'unmined' });
    },
    /** The node forgets the transactions it has and each one sent again: none is ever found pending. */
    forgetSent() {
      forgets = true;
      pool.clear();
    },
    /** The node refuses the next flush once signed (say its nonce was taken meanwhile): never sent. */
    rejectNext() {
      answerNext({ kind: 'reject' });
    },
    /** Every flush, once signed, finds its nonce used by another transaction of the account (the account is used elsewhere). */
    nonceUsedEverytime() {
      answer = () => ({ kind: 'nonceUsed' });
    },
    /** The next flush, signed, never reaches the node and the sweeper does not know it (no answer to the send). */
    loseNextSend() {
      answerNext({ kind: 'sendLost' });
    },
    /** The node does not take the next flush for now (another pending transaction has its nonce), until `releaseHeld`. */
    holdNextFlush() {
      answerNext({ kind: 'held' });
    },
    /** The transaction that held the nonces goes: the node takes the held flushes when they are sent again. */
    releaseHeld() {
      held.clear();
    },
    /** Another transaction of the account took the nonce of `transactionHash`: sent again, it is refused. */
    takeNonceOf(transactionHash: string) {
      nonceTaken.add(transactionHash);
    },
    /** `miner`, in the node's pool (or mined already), is mined with the nonce of `replaced` (the same call, a copy of it): `replaced` never will be. */
    mineInPlace(replaced: string, miner: string) {
      const pending = pool.get(miner);
      if (pending) mineSweep(pending.depositAddresses, pending.transaction);
      pool.delete(replaced);
      minedInPlaceOf.set(replaced, miner);
    },
    /** `transactionHash`, in the node's pool, is mined now; the others stay. */
    mineOne(transactionHash: string) {
      const { depositAddresses, transaction } = pool.get(transactionHash)!;
      mineSweep(depositAddresses, transaction);
    },
    /** The transactions in the node's pool are mined now, sweeping their deposits. */
    mineUnmined() {
      for (const { depositAddresses, transaction } of [...pool.values()]) mineSweep(depositAddresses, transaction);
    },
    acceptEverything() {
      answer = () => ({ kind: 'sweep' });
      readFailure = null;
    },
  };
}

/**
 * A Weir on the test rail (real event store, projections and embedded read store) on a manual
 * clock, and a sweeper over its read models with the executor double for the test network. The
 * sweeper's clock records when it asks to look again.
 */
async function sweeperWorld(t: ExecutionContext, metrics?: Metrics) {
  const clock = createManualClock();
  const weir = await startTestWeir(t, {}, { clock });
  const merchant = await createMerchant(weir.url);
  const chain = chainPublisher(weir.bus);
  const double = createRefusingSweepExecutorDouble();
  const { clock: sweeperClock, scheduled: lookAgainAt } = recordingClock(clock);
  const logged: string[] = [];
  /** Sessions whose next sweep recording (RecordSweep) fails (the event store refuses it), once each. */
  const failNextRecording = new Set<string>();
  /** Sessions whose next broadcast recording (RecordSweepBroadcast) fails, once each. */
  const failNextBroadcastRecording = new Set<string>();
  const commands: CommandHandler = {
    ...weir.commands,
    async handle(aggregate, id, command, ctx) {
      const { type } = command as { type?: string };
      if (type === 'RecordSweep' && failNextRecording.delete(id)) throw new Error('event store unavailable');
      if (type === 'RecordSweepBroadcast' && failNextBroadcastRecording.delete(id))
        throw new Error('event store unavailable');
      return weir.commands.handle(aggregate, id, command, ctx);
    },
  };
  /** Each read of the sweeps looked up still (`lookingUp`, no indexed field: every sweeps document is read). */
  const lateDropReads: number[] = [];
  const readStore: ReadStore = {
    ...weir.readStore,
    collection<T extends ReadDocument>(name: string): Collection<T> {
      const collection = weir.readStore.collection<T>(name);
      return {
        ...collection,
        find(filter, options) {
          if (name === SWEEPS && 'lookingUp' in filter) lateDropReads.push(clock.now());
          return collection.find(filter, options);
        },
      };
    },
  };
  /** A sweeper over the world's durable state (event store, read models, chain), with nothing in memory. */
  const newSweeper = () => {
    const created = createSweeper({
      clock: sweeperClock,
      readStore,
      projections: weir.projections,
      commands,
      executors: new Map([[TEST_NETWORK.network, double.executor]]),
      batchDelayMs: 0,
      retryAfterMs: 1_000,
      maxRetryAfterMs: 4_000,
      dropAfterMs: 3_000,
      lateDropLookUpMs: 10_000,
      log: (line) => logged.push(line),
      ...(metrics ? { metrics } : {}),
    });
    t.teardown(() => created.stop());
    return created;
  };
  const sweeper = newSweeper();
  const sweeps = weir.readStore.collection<SweepDoc>(SWEEPS);
  const sessions = weir.readStore.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions);

  /** A new session, and its USDC deposit address on the test network. */
  const openSession = async () => {
    const created = await merchant.api.post<{
      id: string;
      addresses: { paymentAddress: string; asset: { currency: string } }[];
    }>('/api/v1/checkout/sessions', sessionRequest());
    t.is(created.status, 200, JSON.stringify(created.body));
    return {
      id: created.body.id,
      // As the sweeper and its double hold it (the API answers it in its EIP-55 checksum).
      depositAddress: created.body.addresses.find((a) => a.asset.currency === 'usdc')!.paymentAddress.toLowerCase(),
    };
  };
  /** A final transfer to `depositAddress`: the session gets a confirmed payment to sweep. */
  const pay = async (depositAddress: string, amount = '3000000') => {
    const blockHash = randomHash();
    const blockNumber = double.nextBlock();
    await chain.transfer({ to: depositAddress, amount, blockNumber, blockHash });
    await chain.final(blockNumber, blockHash);
    double.fund(depositAddress);
  };
  /** A transfer to `depositAddress` mined in `at` (the next block by default), not final until `final` is called. */
  const mine = async (depositAddress: string, amount: string, at?: number) => {
    const blockHash = randomHash();
    const block = at ?? double.nextBlock();
    await chain.transfer({ to: depositAddress, amount, blockNumber: block, blockHash });
    double.fund(depositAddress);
    return { blockNumber: block, final: () => chain.final(block, blockHash) };
  };
  const pendingDeposits = async () => (await sweeps.find({ pending: true })).map((d) => d.depositAddress).sort();
  const until = <T>(probe: () => Promise<T | undefined>, what: string) => eventually(probe, what, 10_000);
  /** Waits until the sweeper asks to look again at `at` (it has finished what was due) and returns the flushes so far. */
  const settledUntil = (at: number, what: string) =>
    until(async () => (lookAgainAt.at(-1) === at ? double.flushes.length : undefined), what);
  /** The process restarts: `sweeper` stops, and a new one (returned, started) takes over the same durable state. */
  const restartSweeper = async () => {
    await sweeper.stop();
    const restarted = newSweeper();
    restarted.start();
    return restarted;
  };
  return {
    weir,
    clock,
    double,
    sweeper,
    logged,
    lateDropReads,
    sessions,
    sweeps,
    failNextRecording,
    failNextBroadcastRecording,
    openSession,
    pay,
    mine,
    pendingDeposits,
    until,
    settledUntil,
    restartSweeper,
  };
}

const refusedFlushesOf = (flushes: Flush[], depositAddress: string) =>
  flushes.filter((f) => f.result === null && f.depositAddresses.includes(depositAddress));

test('one deposit that cannot be swept does not hold back the others; it waits on its own doubling backoff until a success clears it', async (t) => {
  const w = await sweeperWorld(t);
  const opened = [await w.openSession(), await w.openSession(), await w.openSession(), await w.openSession()];
  const bad = opened[1]!;
  const good = opened.filter((s) => s !== bad);
  w.double.refuseDeposit(bad.depositAddress);
  for (const session of opened) await w.pay(session.depositAddress);
  await w.until(async () => ((await w.pendingDeposits()).length === 4 ? true : undefined), 'four deposits to sweep');
  const t0 = w.clock.now();

  w.sweeper.start();
  await w.until(
    async () => ((await w.pendingDeposits()).join() === bad.depositAddress ? true : undefined),
    'the good deposits swept in the first run',
  );
  await w.settledUntil(t0 + 1_000, 'the next look at the bad deposit after its first backoff (1 s)');
  t.is(w.clock.now(), t0, 'all in the same run, without the clock moving');
  const firstRun = [...w.double.flushes];
  t.deepEqual(
    [...firstRun[0]!.depositAddresses].sort(),
    opened.map((s) => s.depositAddress).sort(),
    'the batch of all four was tried first',
  );
  t.is(firstRun[0]!.result, null);
  t.true(firstRun.length <= 2 * 4 - 1, `${firstRun.length} flushes for 4 deposits`);
  t.is(
    firstRun.filter((f) => f.result === null && f.depositAddresses.length === 1).length,
    1,
    'only the bad deposit failed alone',
  );
  // Gas: each transaction actually sent is split exactly over the sessions it swept.
  const sent = firstRun.filter((f) => f.result !== null);
  t.deepEqual(
    sent.flatMap((f) => f.depositAddresses).sort(),
    good.map((s) => s.depositAddress).sort(),
    'each good deposit swept once',
  );
  for (const flush of sent) {
    const swept = await Promise.all(
      flush.depositAddresses.map(
        async (address) => (await w.sessions.get(opened.find((s) => s.depositAddress === address)!.id))!,
      ),
    );
    const records = swept.map((s) => {
      t.is(s.sweeps.length, 1);
      return s.sweeps[0]!;
    });
    t.true(
      records.every((r) => r.transactionHash === flush.result!.transactionHash),
      'each session records the transaction that swept it',
    );
    // Its block and both ends, so the sweep is matched to the chain from the event alone.
    t.deepEqual(
      records.map((r) => [r.blockNumber, r.depositAddress, r.merchantAddress]),
      flush.depositAddresses.map((address) => [Number(flush.result!.blockNumber), address, MERCHANT_WALLET]),
    );
    t.is(
      records.reduce((sum, r) => sum + BigInt(r.gasUsed), 0n),
      flush.result!.gasUsed,
    );
    t.is(
      records.reduce((sum, r) => sum + BigInt(r.gasCost), 0n),
      flush.result!.gasCost,
    );
  }
  t.is((await w.sessions.get(bad.id))!.sweeps.length, 0);
  t.is(w.logged.length, 1);
  t.true(
    w.logged[0]!.includes(bad.depositAddress) &&
      w.logged[0]!.includes('retrying it in 1 s') &&
      w.logged[0]!.includes(`NativeTransferFailed(${bad.depositAddress})`),
    w.logged[0],
  );

  // A payment confirmed meanwhile is swept at once, not behind the bad deposit's backoff.
  const late = await w.openSession();
  await w.pay(late.depositAddress);
  await w.until(
    async () => ((await w.sessions.get(late.id))!.sweeps.length === 1 ? true : undefined),
    'the new deposit swept',
  );
  t.is(w.clock.now(), t0);
  t.deepEqual(w.double.flushes.at(-1)!.depositAddresses, [late.depositAddress]);
  await w.settledUntil(t0 + 1_000, 'the bad deposit still waiting for its own time');

  // The bad deposit alone, on its own doubling backoff: 1 s, 2 s, 4 s, then capped at 4 s.
  let refusals = refusedFlushesOf(w.double.flushes, bad.depositAddress).length;
  for (const [at, next] of [
    [t0 + 1_000, t0 + 3_000],
    [t0 + 3_000, t0 + 7_000],
    [t0 + 7_000, t0 + 11_000],
  ] as const) {
    w.clock.advanceTo(at - 1);
    t.is(refusedFlushesOf(w.double.flushes, bad.depositAddress).length, refusals, 'not tried before its time');
    w.clock.advanceTo(at);
    await w.settledUntil(next, `the retry at +${at - t0} ms, then the next one at +${next - t0} ms`);
    t.deepEqual(w.double.flushes.at(-1), { depositAddresses: [bad.depositAddress], result: null });
    refusals += 1;
    t.is(refusedFlushesOf(w.double.flushes, bad.depositAddress).length, refusals, 'tried exactly once');
  }
  t.regex(w.logged.at(-1)!, /\(4 time\(s\) in a row\), retrying it in 4 s/);

  // The wallet accepts again: the next try sweeps it, with the whole gas of its own transaction.
  w.double.acceptEverything();
  w.clock.advanceTo(t0 + 11_000);
  const recovered = await w.until(async () => {
    const s = (await w.sessions.get(bad.id))!;
    return s.sweeps.length === 1 ? s : undefined;
  }, 'the bad deposit swept');
  const lastFlush = w.double.flushes.at(-1)!;
  t.deepEqual(lastFlush.depositAddresses, [bad.depositAddress]);
  t.is(recovered.sweeps[0]!.transactionHash, lastFlush.result!.transactionHash);
  t.is(recovered.sweeps[0]!.gasUsed, lastFlush.result!.gasUsed.toString());
  t.deepEqual(await w.pendingDeposits(), []);

  // The success cleared its backoff: a new failure of the same deposit starts again at 1 s, not 8 s.
  w.double.refuseDeposit(bad.depositAddress);
  await w.pay(bad.depositAddress, '1');
  const now = w.clock.now();
  await w.settledUntil(now + 1_000, 'a fresh first backoff of 1 s');
  t.deepEqual(w.double.flushes.at(-1), { depositAddresses: [bad.depositAddress], result: null });
  t.regex(w.logged.at(-1)!, /\(1 time\(s\) in a row\), retrying it in 1 s/);
});

test('when every flush fails alike (the node is down), a run stays bounded and the network backs off as a whole, blaming no deposit', async (t) => {
  const w = await sweeperWorld(t);
  const opened = [await w.openSession(), await w.openSession(), await w.openSession(), await w.openSession()];
  w.double.refuseEverything('HTTP request failed. URL: https://rpc.example/v3/secret-api-key');
  for (const session of opened) await w.pay(session.depositAddress);
  await w.until(async () => ((await w.pendingDeposits()).length === 4 ? true : undefined), 'four deposits to sweep');
  const t0 = w.clock.now();

  w.sweeper.start();
  t.is(
    await w.settledUntil(t0 + 1_000, 'the network backoff of 1 s'),
    2 * 4 - 1,
    'bisection of 4 deposits: at most 7 flushes',
  );
  t.true(w.double.flushes.every((f) => f.result === null));
  t.is(w.logged.length, 1);
  t.regex(
    w.logged[0]!,
    /^sweep of 4 deposit address\(es\) on weir-testnet failed, each alone too, retrying in 1 s: HTTP request failed\. URL: <url>$/,
  );
  t.false(w.logged[0]!.includes('secret'), 'the RPC URL (and its key) stays out of the log');

  // The network waits a fixed 1 s again (no doubling for a network-wide failure).
  w.clock.advanceTo(t0 + 1_000);
  t.is(await w.settledUntil(t0 + 2_000, 'the network backoff of 1 s again'), 2 * (2 * 4 - 1));

  // The node is back: no deposit carries a backoff of its own, so all go in one transaction.
  w.double.acceptEverything();
  w.clock.advanceTo(t0 + 2_000);
  await w.until(async () => ((await w.pendingDeposits()).length === 0 ? true : undefined), 'everything swept');
  const sent = w.double.flushes.filter((f) => f.result !== null);
  t.is(sent.length, 1);
  t.deepEqual([...sent[0]!.depositAddresses].sort(), opened.map((s) => s.depositAddress).sort());
});

/** Opens `count` sessions, pays each, and waits until all are pending in the sweeps read model. */
async function paidSessions(w: Awaited<ReturnType<typeof sweeperWorld>>, count: number) {
  const opened = [];
  for (let i = 0; i < count; i += 1) opened.push(await w.openSession());
  for (const session of opened) await w.pay(session.depositAddress);
  await w.until(
    async () => ((await w.pendingDeposits()).length === count ? true : undefined),
    `${count} deposits to sweep`,
  );
  return opened;
}

test('a flush mined but not recorded (the event store failed) is recorded on the next round, never flushed again', async (t) => {
  const w = await sweeperWorld(t);
  const [a, b] = await paidSessions(w, 2);
  w.failNextRecording.add(b!.id);
  const t0 = w.clock.now();

  w.sweeper.start();
  await w.settledUntil(t0 + 1_000, 'the network backoff after the failed recording');
  t.regex(w.logged.at(-1)!, /^recording a sweep on weir-testnet failed, retrying in 1 s: event store unavailable$/);
  w.clock.advanceTo(t0 + 1_000);
  await w.until(async () => ((await w.pendingDeposits()).length === 0 ? true : undefined), 'both recorded');
  t.is(w.double.flushes.length, 1, 'one transaction for both, none sent again');
  const [flush] = w.double.flushes;
  const records = await Promise.all([a!, b!].map(async (s) => (await w.sessions.get(s.id))!.sweeps));
  t.deepEqual(
    records.map((r) => r.map((sweep) => sweep.transactionHash)),
    [[flush!.result!.transactionHash], [flush!.result!.transactionHash]],
  );
  t.is(
    records.flat().reduce((sum, r) => sum + BigInt(r.gasCost), 0n),
    flush!.result!.gasCost,
    'the second session records its share of the first transaction',
  );
});

test('deposits emptied on chain by a flush Weir has no record of (anyone may flush a forwarder) are seen empty and no transaction sweeping nothing is sent', async (t) => {
  const w = await sweeperWorld(t);
  const opened = await paidSessions(w, 2);
  for (const session of opened) w.double.emptyElsewhere(session.depositAddress);
  const t0 = w.clock.now();

  w.sweeper.start();
  await w.settledUntil(t0 + 1_000, "the deposits' own first backoff");
  w.clock.advanceTo(t0 + 1_000);
  await w.settledUntil(t0 + 3_000, 'looked again on chain, still empty: the doubled backoff');
  t.is(w.double.flushes.length, 0, 'no flush at all');
  t.deepEqual(
    w.double.flushes.filter((f) => f.sweptNothing),
    [],
  );
  t.is(w.logged.filter((line) => line.includes('holds nothing on chain')).length, 4, 'each deposit, at each look');
  t.true(opened.every((s) => w.logged.some((line) => line.includes(s.depositAddress))));

  // A new payment to one of them: it holds something again and is swept.
  await w.pay(opened[0]!.depositAddress, '1');
  w.clock.advanceTo(t0 + 3_000);
  await w.until(
    async () => ((await w.sessions.get(opened[0]!.id))!.sweeps.length === 1 ? true : undefined),
    'the new payment swept',
  );
  t.deepEqual(w.double.flushes.at(-1)!.depositAddresses, [opened[0]!.depositAddress]);
  t.deepEqual(
    w.double.flushes.filter((f) => f.sweptNothing),
    [],
  );
});

test('a flush mined but reverted records its gas on the sessions it was sent for, and the deposits are retried as after other failures', async (t) => {
  const w = await sweeperWorld(t);
  const [good, bad] = await paidSessions(w, 2);
  w.double.revertDeposit(bad!.depositAddress);
  const t0 = w.clock.now();

  w.sweeper.start();
  await w.settledUntil(t0 + 1_000, "the reverting deposit's own first backoff");
  // [good, bad] reverted, [good] swept, [bad] reverted.
  t.deepEqual(
    w.double.flushes.map((f) => [f.depositAddresses.length, f.reverted ? 'reverted' : 'swept']),
    [
      [2, 'reverted'],
      [1, 'swept'],
      [1, 'reverted'],
    ],
  );
  const [both, alone, badAlone] = w.double.flushes;
  const goodSweeps = (await w.sessions.get(good!.id))!.sweeps;
  const badSweeps = await w.until(async () => {
    const s = (await w.sessions.get(bad!.id))!.sweeps;
    return s.length === 2 ? s : undefined;
  }, 'both reverts recorded on the bad session');
  t.deepEqual(
    goodSweeps.map((s) => [s.transactionHash, s.reverted ?? false, s.transferIds.length]),
    [
      [both!.reverted!.transactionHash, true, 0],
      [alone!.result!.transactionHash, false, 1],
    ],
  );
  t.deepEqual(
    badSweeps.map((s) => [s.transactionHash, s.reverted ?? false, s.transferIds.length]),
    [
      [both!.reverted!.transactionHash, true, 0],
      [badAlone!.reverted!.transactionHash, true, 0],
    ],
  );
  const paid = both!.reverted!.gasCost + alone!.result!.gasCost + badAlone!.reverted!.gasCost;
  t.is(
    [...goodSweeps, ...badSweeps].reduce((sum, s) => sum + BigInt(s.gasCost), 0n),
    paid,
    'every wei of gas paid is recorded',
  );
  t.deepEqual(await w.pendingDeposits(), [bad!.depositAddress], 'a reverted sweep moved nothing: still pending');
  t.regex(w.logged.at(-1)!, /failed on its own \(1 time\(s\) in a row\), retrying it in 1 s/);

  w.double.acceptEverything();
  w.clock.advanceTo(t0 + 1_000);
  await w.until(
    async () => ((await w.pendingDeposits()).length === 0 ? true : undefined),
    'the deposit swept on its retry',
  );
});

test('a single deposit failing while the node is down is not blamed: the network round waits a fixed time and sweeps it once the node answers', async (t) => {
  const w = await sweeperWorld(t);
  const [only] = await paidSessions(w, 1);
  w.double.nodeDown('HTTP request failed. Status: 502');
  const t0 = w.clock.now();

  w.sweeper.start();
  await w.settledUntil(t0 + 1_000, 'the network backoff of 1 s');
  for (const at of [t0 + 1_000, t0 + 2_000]) {
    w.clock.advanceTo(at);
    await w.settledUntil(at + 1_000, 'the network backoff of 1 s again, not a doubling one of the deposit');
  }
  t.true(
    w.logged.every((line) =>
      /^the node of weir-testnet failed sweeping 1 deposit address\(es\), retrying in 1 s: HTTP request failed/.test(
        line,
      ),
    ),
    w.logged.join('\n'),
  );

  w.double.acceptEverything();
  w.clock.advanceTo(t0 + 3_000);
  await w.until(
    async () => ((await w.sessions.get(only!.id))!.sweeps.length === 1 ? true : undefined),
    'swept in the first round after the node is back',
  );
  t.is(w.clock.now(), t0 + 3_000);
});

/**
 * Two paid sessions, `arrange` run on the world (how the first flush goes), the sweeper started,
 * and settled until it looks again at `firstLookAt` ms after the start (`t0`).
 */
async function startedOnTwoDeposits(
  t: ExecutionContext,
  arrange: (world: Awaited<ReturnType<typeof sweeperWorld>>, opened: { id: string }[]) => void,
  firstLook: string,
  metrics?: Metrics,
) {
  const w = await sweeperWorld(t, metrics);
  const opened = await paidSessions(w, 2);
  arrange(w, opened);
  const t0 = w.clock.now();
  w.sweeper.start();
  await w.settledUntil(t0 + 1_000, firstLook);
  return { w, opened, t0 };
}

/** Two deposits flushed in one transaction that the node keeps unmined (its receipt not had), looked up in 1 s. */
async function startedUnmined(t: ExecutionContext, metrics?: Metrics) {
  const started = await startedOnTwoDeposits(
    t,
    (world) => {
      world.double.leaveNextUnmined();
    },
    'the first look-up in 1 s',
    metrics,
  );
  return { ...started, unmined: started.w.double.flushes[0]!.unmined! };
}

/** The sessions' sweeps (transaction, transfers, gas) and the sweeps read model's broadcast transaction, per session. */
async function sweepStateOf(w: Awaited<ReturnType<typeof sweeperWorld>>, opened: { id: string }[]) {
  return Promise.all(
    opened.map(async ({ id }) => {
      const session = (await w.sessions.get(id))!;
      const [doc] = await w.sweeps.find({ checkoutSessionId: id });
      return {
        sweeps: session.sweeps.map((s) => ({
          transactionHash: s.transactionHash,
          transfers: s.transferIds.length,
          gasUsed: BigInt(s.gasUsed),
          gasCost: BigInt(s.gasCost),
        })),
        broadcast: (session.sweepsBroadcast ?? []).map((b) => b.transactionHash),
        pending: doc!.pending,
        readModelBroadcast: doc!.broadcast?.transactionHash ?? null,
      };
    }),
  );
}

/** Each session records `transaction` once, with one transfer, and their shares of its gas add up to what it cost. */
function assertRecordedOnce(
  t: ExecutionContext,
  states: Awaited<ReturnType<typeof sweepStateOf>>,
  transaction: SweepResult,
) {
  t.true(
    states.every(
      (s) =>
        s.sweeps.length === 1 &&
        s.sweeps[0]!.transactionHash === transaction.transactionHash &&
        s.sweeps[0]!.transfers === 1,
    ),
    JSON.stringify(states.map((s) => s.sweeps.length)),
  );
  t.is(
    states.reduce((sum, s) => sum + s.sweeps[0]!.gasUsed, 0n),
    transaction.gasUsed,
  );
  t.is(
    states.reduce((sum, s) => sum + s.sweeps[0]!.gasCost, 0n),
    transaction.gasCost,
  );
  t.true(
    states.every((s) => !s.pending && s.broadcast.length === 0 && s.readModelBroadcast === null),
    'nothing left shown as being swept',
  );
}

test('a flush whose receipt was lost is shown as being swept, looked up by its hash and recorded with its gas, never flushed again', async (t) => {
  const { w, opened, t0 } = await startedOnTwoDeposits(
    t,
    (world) => {
      world.double.loseNextReceipt();
    },
    'the look-up of the transaction in 1 s',
  );
  t.is(w.double.flushes.length, 1);
  const transaction = w.double.flushes[0]!.result!;
  t.regex(
    w.logged.at(-1)!,
    new RegExp(
      `^the receipt of sweep transaction ${transaction.transactionHash} \\(2 deposit address\\(es\\)\\) on weir-testnet was not had; not flushing them again, looking it up in 1 s`,
    ),
  );
  // Meanwhile: pending, and being swept by that transaction (not as never swept).
  t.deepEqual(
    (await sweepStateOf(w, opened)).map((s) => [s.sweeps.length, s.broadcast, s.pending, s.readModelBroadcast]),
    opened.map(() => [0, [transaction.transactionHash], true, transaction.transactionHash]),
  );

  w.clock.advanceTo(t0 + 1_000);
  await w.until(
    async () => ((await w.pendingDeposits()).length === 0 ? true : undefined),
    'the mined transaction recorded',
  );
  assertRecordedOnce(t, await sweepStateOf(w, opened), transaction);
  t.is(w.double.flushes.length, 1, 'not flushed again');
  t.false(w.logged.some((line) => line.includes('holds nothing on chain')));
});

test('a flush sent but never mined is looked up until it is taken as dropped, then its deposits, still funded, are flushed again', async (t) => {
  const { w, opened, t0, unmined: dropped } = await startedUnmined(t);
  for (const at of [t0 + 1_000, t0 + 2_000]) {
    w.clock.advanceTo(at);
    await w.settledUntil(at + 1_000, 'not mined: looked up again in 1 s');
    t.regex(
      w.logged.at(-1)!,
      new RegExp(
        `^sweep transaction ${dropped.transactionHash} on weir-testnet is not mined ${(at - t0) / 1000} s after it was sent; not flushing its 2 deposit address\\(es\\) again`,
      ),
    );
  }
  t.is(w.double.flushes.length, 1, 'no flush while it may still be mined');
  t.deepEqual(
    (await sweepStateOf(w, opened)).map((s) => s.readModelBroadcast),
    [dropped.transactionHash, dropped.transactionHash],
  );

  // dropAfterMs (3 s) after it was sent: dropped, and the deposits are flushed again.
  w.clock.advanceTo(t0 + 3_000);
  await w.until(async () => ((await w.pendingDeposits()).length === 0 ? true : undefined), 'swept by a new flush');
  t.is(w.double.flushes.length, 2);
  assertRecordedOnce(t, await sweepStateOf(w, opened), w.double.flushes[1]!.result!);
  t.true(
    w.logged.some((line) =>
      line.startsWith(
        `sweep transaction ${dropped.transactionHash} on weir-testnet was not mined 3 s after it was sent: taken as dropped`,
      ),
    ),
  );
});

test('a flush the node forgets each time it is sent again is dropped dropAfterMs after it was first sent again, not sent again for ever', async (t) => {
  const { w, opened, t0, unmined: forgotten } = await startedUnmined(t);
  w.double.forgetSent();
  const resent = () => w.logged.filter((line) => line.includes('the node did not have it: sent again')).length;
  const dropped = () =>
    w.logged.some((line) => line.includes(`${forgotten.transactionHash} on weir-testnet was not mined`));
  for (const at of [t0 + 1_000, t0 + 2_000, t0 + 3_000]) {
    w.clock.advanceTo(at);
    await w.settledUntil(at + 1_000, 'sent again, looked up again in 1 s');
  }
  t.is(resent(), 3);
  // dropAfterMs (3 s) after it was first sent again, whatever the node answers since: dropped, its deposits flushed again.
  w.clock.advanceTo(t0 + 4_000);
  await w.until(async () => (dropped() || resent() === 4 ? true : undefined), 'dropped, or sent again once more');
  t.true(dropped(), w.logged.join('\n'));
  await w.until(async () => ((await w.pendingDeposits()).length === 0 ? true : undefined), 'swept by a new flush');
  t.is(w.double.flushes.length, 2);
  assertRecordedOnce(t, await sweepStateOf(w, opened), w.double.flushes[1]!.result!);
});

test('after a restart, a flush mined whose recording failed is found by its hash and recorded, with its share of the gas', async (t) => {
  const { w, opened, t0 } = await startedOnTwoDeposits(
    t,
    (world, sessions) => {
      world.failNextRecording.add(sessions[1]!.id);
    },
    'the network backoff after the failed recording',
  );
  await w.restartSweeper();
  await w.until(
    async () => ((await w.pendingDeposits()).length === 0 ? true : undefined),
    'recorded by the restarted sweeper',
  );
  t.is(w.clock.now(), t0, 'looked up at once by the restarted sweeper');
  t.is(w.double.flushes.length, 1, 'one transaction, not sent again');
  assertRecordedOnce(t, await sweepStateOf(w, opened), w.double.flushes[0]!.result!);
});

test('after a restart, a flush sent before it and mined after is found by its hash and recorded, never flushed again', async (t) => {
  const { w, opened, t0 } = await startedUnmined(t);
  w.double.mineUnmined();
  await w.restartSweeper();
  await w.until(
    async () => ((await w.pendingDeposits()).length === 0 ? true : undefined),
    'recorded by the restarted sweeper',
  );
  t.is(w.clock.now(), t0, 'looked up at once by the restarted sweeper');
  t.is(w.double.flushes.length, 1, 'one transaction, not sent again');
  assertRecordedOnce(t, await sweepStateOf(w, opened), w.double.flushes[0]!.unmined!);
});

test('a flush whose recording fails is not sent: what was recorded of it is dropped on the next round and the deposits are swept once', async (t) => {
  const w = await sweeperWorld(t);
  const opened = await paidSessions(w, 2);
  w.failNextBroadcastRecording.add(opened[1]!.id);
  const t0 = w.clock.now();

  w.sweeper.start();
  await w.settledUntil(t0 + 1_000, 'the network backoff after the failed recording');
  t.regex(w.logged.at(-1)!, /^recording a sweep on weir-testnet failed, retrying in 1 s: event store unavailable$/);
  t.is(w.double.flushes.length, 1);
  const unsent = w.double.flushes[0]!.unsent!;
  t.truthy(unsent, 'signed, never handed to the node');
  t.deepEqual(
    (await sweepStateOf(w, opened)).map((s) => s.broadcast),
    [[unsent.transactionHash], []],
    'recorded on the first session only',
  );

  w.clock.advanceTo(t0 + 1_000);
  await w.until(async () => ((await w.pendingDeposits()).length === 0 ? true : undefined), 'swept by a new flush');
  t.is(w.double.flushes.length, 2);
  assertRecordedOnce(t, await sweepStateOf(w, opened), w.double.flushes[1]!.result!);
  t.true(
    w.logged.some((line) =>
      line.startsWith(
        `sweep transaction ${unsent.transactionHash} on weir-testnet recording it failed, so it was never sent, its 2 deposit address(es)`,
      ),
    ),
    w.logged.join('\n'),
  );
});

test('a flush the node refuses once signed is recorded as dropped at once and its deposits are swept in the same run, not after dropAfterMs', async (t) => {
  const w = await sweeperWorld(t);
  const opened = await paidSessions(w, 2);
  w.double.rejectNext();
  const t0 = w.clock.now();

  w.sweeper.start();
  await w.until(async () => ((await w.pendingDeposits()).length === 0 ? true : undefined), 'both swept');
  t.is(w.clock.now(), t0);
  const [refused, ...after] = w.double.flushes;
  t.truthy(refused!.unsent);
  t.deepEqual(
    after.map((f) => [f.depositAddresses.length, f.result !== null]),
    [
      [1, true],
      [1, true],
    ],
    'the batch split as after any failed flush, each half swept',
  );
  const states = await sweepStateOf(w, opened);
  t.true(states.every((s) => s.sweeps.length === 1 && s.broadcast.length === 0 && !s.pending));
  t.true(
    w.logged.some((line) =>
      line.startsWith(`sweep transaction ${refused!.unsent!.transactionHash} on weir-testnet was refused by the node`),
    ),
    w.logged.join('\n'),
  );
});

test('a flush whose nonce another transaction used is flushed again at once, unsplit; when that one loses its nonce too, the network backs off, blaming no deposit', async (t) => {
  const w = await sweeperWorld(t);
  const opened = await paidSessions(w, 2);
  w.double.nonceUsedEverytime();
  const t0 = w.clock.now();

  w.sweeper.start();
  t.is(await w.settledUntil(t0 + 1_000, 'the network backoff of 1 s'), 2, 'signed again once, for both deposits');
  t.deepEqual(
    w.double.flushes.map((f) => [f.depositAddresses.length, f.unsent !== undefined]),
    [
      [2, true],
      [2, true],
    ],
  );
  t.regex(w.logged.at(-1)!, /^the node of weir-testnet failed sweeping 2 deposit address\(es\), retrying in 1 s: /);
  t.false(
    w.logged.some((line) => line.includes('failed on its own')),
    'no deposit blamed',
  );
  t.true((await sweepStateOf(w, opened)).every((s) => s.pending && s.broadcast.length === 0));

  w.double.acceptEverything();
  w.clock.advanceTo(t0 + 1_000);
  await w.until(async () => ((await w.pendingDeposits()).length === 0 ? true : undefined), 'swept');
  assertRecordedOnce(t, await sweepStateOf(w, opened), w.double.flushes[2]!.result!);
});

test('after a restart, a flush recorded whose send never reached the node is sent again, the very same transaction, and recorded once mined', async (t) => {
  const { w, opened, t0 } = await startedOnTwoDeposits(
    t,
    (world) => {
      world.double.loseNextSend();
    },
    'the look-up of the transaction in 1 s',
  );
  const recorded = w.double.flushes[0]!.unsent!;
  await w.restartSweeper();
  // The sweeper before the restart already asked to look again at t0 + 1 s: the restarted one's log says it is done.
  await w.until(
    async () => (w.logged.at(-1)?.includes('sent again') ? true : undefined),
    'looked up at once, sent again, looked up again in 1 s',
  );
  t.deepEqual(w.double.rebroadcasts, [{ transactionHash: recorded.transactionHash, signed: true, answer: 'resent' }]);
  t.regex(w.logged.at(-1)!, /\(the node did not have it: sent again\); not flushing its 2 deposit address\(es\) again/);
  w.double.mineUnmined();
  w.clock.advanceTo(t0 + 1_000);
  await w.until(
    async () => ((await w.pendingDeposits()).length === 0 ? true : undefined),
    'recorded by the restarted sweeper',
  );
  t.is(w.double.flushes.length, 1, 'no new flush signed');
  assertRecordedOnce(t, await sweepStateOf(w, opened), recorded);
});

test('after a restart, a flush recorded but never sent whose nonce another transaction took is dropped at once and its deposits swept once', async (t) => {
  const { w, opened, t0 } = await startedOnTwoDeposits(
    t,
    (world) => {
      world.double.loseNextSend();
    },
    'the look-up of the transaction in 1 s',
  );
  const recorded = w.double.flushes[0]!.unsent!;
  w.double.takeNonceOf(recorded.transactionHash);
  await w.restartSweeper();
  await w.until(async () => ((await w.pendingDeposits()).length === 0 ? true : undefined), 'swept by a new flush');
  t.is(w.clock.now(), t0, 'not after dropAfterMs');
  t.deepEqual(w.double.rebroadcasts, [{ transactionHash: recorded.transactionHash, signed: true, answer: 'absent' }]);
  t.is(w.double.flushes.length, 2);
  assertRecordedOnce(t, await sweepStateOf(w, opened), w.double.flushes[1]!.result!);
});

test('after a restart, a flush recorded on only some of its deposits (the process died while recording it) is never sent: dropped at once, its deposits swept once', async (t) => {
  const { w, opened, t0 } = await startedOnTwoDeposits(
    t,
    (world, sessions) => {
      world.failNextBroadcastRecording.add(sessions[1]!.id);
    },
    'the network backoff after the failed recording',
  );
  const partial = w.double.flushes[0]!.unsent!;
  await w.restartSweeper();
  await w.until(async () => ((await w.pendingDeposits()).length === 0 ? true : undefined), 'swept by a new flush');
  t.is(w.clock.now(), t0);
  t.deepEqual(
    w.double.rebroadcasts,
    [{ transactionHash: partial.transactionHash, signed: false, answer: 'absent' }],
    'asked whether the node has it, never sent',
  );
  t.is(w.double.flushes.length, 2);
  t.deepEqual(w.double.flushes[1]!.depositAddresses.length, 2);
  assertRecordedOnce(t, await sweepStateOf(w, opened), w.double.flushes[1]!.result!);
});

test('after a restart, a flush the node still does not take (another pending transaction has its nonce) is asked about before its age counts: it waits, never dropped, and is recorded once mined', async (t) => {
  const { w, opened, t0 } = await startedOnTwoDeposits(
    t,
    (world) => {
      world.double.holdNextFlush();
    },
    'the look-up of the waiting transaction in 1 s',
  );
  const waiting = w.double.flushes[0]!.unsent!;
  // Past dropAfterMs (3 s) while waiting: the sweeper before the restart keeps it (it knows it waits).
  w.clock.advanceTo(t0 + 4_000);
  await w.settledUntil(t0 + 5_000, 'still waiting, looked up again in 1 s');
  await w.restartSweeper();
  const waitedOn = () => w.logged.filter((line) => line.includes('did not take it again')).length;
  await w.until(async () => (waitedOn() === 2 ? true : undefined), 'the restarted sweeper asks the node, and waits');
  t.deepEqual(
    w.double.rebroadcasts.map((r) => r.answer),
    ['waiting', 'waiting'],
    'asked by the sweeper before the restart, then by the restarted one',
  );
  t.false(
    w.logged.some((line) => line.includes('taken as dropped')),
    w.logged.join('\n'),
  );
  t.is(w.double.flushes.length, 1, 'its deposits not flushed again');
  t.deepEqual(
    (await sweepStateOf(w, opened)).map((s) => s.readModelBroadcast),
    [waiting.transactionHash, waiting.transactionHash],
  );

  // The nonce is freed: sent again, taken, mined, recorded.
  w.double.releaseHeld();
  w.clock.advanceTo(t0 + 5_000);
  await w.settledUntil(t0 + 6_000, 'sent again, looked up in 1 s');
  w.double.mineUnmined();
  w.clock.advanceTo(t0 + 6_000);
  await w.until(async () => ((await w.pendingDeposits()).length === 0 ? true : undefined), 'recorded once mined');
  t.is(w.double.flushes.length, 1);
  assertRecordedOnce(t, await sweepStateOf(w, opened), waiting);
});

/**
 * A flush left unmined past dropAfterMs (3 s), so dropped at t0 + 3 s, and its re-flush left
 * unmined too: both in the node's pool, the drop looked up again from t0 + 4 s.
 */
async function droppedAndFlushedAgain(t: ExecutionContext, metrics?: Metrics) {
  const { w, opened, t0, unmined: dropped } = await startedUnmined(t, metrics);
  w.double.leaveNextUnmined();
  w.clock.advanceTo(t0 + 3_000);
  await w.until(async () => (w.double.flushes.length === 2 ? true : undefined), 'dropped, flushed again');
  await w.settledUntil(t0 + 4_000, 'the re-flush looked up in 1 s');
  const again = w.double.flushes[1]!.unmined!;
  t.truthy(again, 'the re-flush is in the pool too');
  return { w, opened, t0, dropped, again };
}

/** The sessions' sweeps as [transaction, transfers], and what their shares of gas and cost add up to. */
async function recordedSweepsOf(w: Awaited<ReturnType<typeof sweeperWorld>>, opened: { id: string }[]) {
  const states = await sweepStateOf(w, opened);
  return {
    sweeps: states.map((s) => s.sweeps.map((sweep) => [sweep.transactionHash, sweep.transfers])),
    gasUsed: states.flatMap((s) => s.sweeps).reduce((sum, sweep) => sum + sweep.gasUsed, 0n),
    gasCost: states.flatMap((s) => s.sweeps).reduce((sum, sweep) => sum + sweep.gasCost, 0n),
    open: states.map((s) => [s.pending, s.broadcast, s.readModelBroadcast]),
  };
}

test('a flush dropped as not mined in time that the node mines after all (its re-flush mined too, at the next nonce) is recorded with its gas, once, beside the re-flush', async (t) => {
  const { w, opened, t0, dropped, again } = await droppedAndFlushedAgain(t);
  w.double.mineUnmined();
  w.clock.advanceTo(t0 + 4_000);
  await w.until(async () => ((await w.pendingDeposits()).length === 0 ? true : undefined), 'both recorded');
  const recorded = await recordedSweepsOf(w, opened);
  t.deepEqual(
    recorded.sweeps,
    opened.map(() => [
      [dropped.transactionHash, 1],
      [again.transactionHash, 0],
    ]),
    'the dropped flush swept the transfers; the re-flush, mined after it, only paid its gas',
  );
  t.is(recorded.gasUsed, dropped.gasUsed + again.gasUsed);
  t.is(recorded.gasCost, dropped.gasCost + again.gasCost);
  t.true(
    w.logged.some((line) => line.startsWith(`sweep transaction ${dropped.transactionHash} on weir-testnet, dropped`)),
    w.logged.join('\n'),
  );
  t.is(w.double.flushes.length, 2);
});

test('a flush dropped as not mined in time, then mined with the nonce of its re-flush (the same call), is recorded once with its gas, and the re-flush ends as dropped', async (t) => {
  const metrics = createPrometheusMetrics();
  const { w, opened, t0, dropped, again } = await droppedAndFlushedAgain(t, metrics);
  w.double.mineInPlace(again.transactionHash, dropped.transactionHash);
  w.clock.advanceTo(t0 + 4_000);
  await w.until(async () => ((await w.pendingDeposits()).length === 0 ? true : undefined), 'recorded');
  const recorded = await recordedSweepsOf(w, opened);
  t.deepEqual(
    recorded.sweeps,
    opened.map(() => [[dropped.transactionHash, 1]]),
  );
  t.is(recorded.gasUsed, dropped.gasUsed, 'its gas counted once');
  t.is(recorded.gasCost, dropped.gasCost);
  t.deepEqual(
    recorded.open,
    opened.map(() => [false, [], null]),
    'the re-flush is no longer shown as being swept',
  );
  t.is(w.double.flushes.length, 2);
  const scraped = (await metrics.scrape()).split('\n');
  t.true(scraped.includes('weir_sweep_transactions_total{network="weir-testnet",outcome="swept"} 1'), 'counted once');
  t.true(scraped.includes(`weir_sweep_gas_used_total{network="weir-testnet"} ${dropped.gasUsed}`));
});

test('flushes the node does not take for now are counted, with how long the oldest has waited, in the metrics (weir_sweep_flushes_waiting, weir_sweep_flush_waiting_seconds)', async (t) => {
  const metrics = createPrometheusMetrics();
  const w = await sweeperWorld(t, metrics);
  await paidSessions(w, 2);
  const waitingFigures = async () =>
    (await metrics.scrape())
      .split('\n')
      .filter((line) => /^weir_sweep_(flushes_waiting|flush_waiting_seconds)\{/.test(line));
  t.deepEqual(await waitingFigures(), [
    'weir_sweep_flushes_waiting{network="weir-testnet"} 0',
    'weir_sweep_flush_waiting_seconds{network="weir-testnet"} 0',
  ]);
  w.double.holdNextFlush();
  const t0 = w.clock.now();
  w.sweeper.start();
  await w.settledUntil(t0 + 1_000, 'waiting: looked up in 1 s');
  w.clock.advanceTo(t0 + 4_000);
  await w.settledUntil(t0 + 5_000, 'still waiting, past dropAfterMs');
  t.deepEqual(await waitingFigures(), [
    'weir_sweep_flushes_waiting{network="weir-testnet"} 1',
    'weir_sweep_flush_waiting_seconds{network="weir-testnet"} 4',
  ]);

  w.double.releaseHeld();
  w.clock.advanceTo(t0 + 5_000);
  await w.settledUntil(t0 + 6_000, 'taken: looked up in 1 s');
  t.deepEqual(await waitingFigures(), [
    'weir_sweep_flushes_waiting{network="weir-testnet"} 0',
    'weir_sweep_flush_waiting_seconds{network="weir-testnet"} 0',
  ]);
});

test('a flush dropped as not mined in time and mined later is recorded; its re-flush, never mined, is dropped in turn and nothing is flushed for deposits already swept', async (t) => {
  const { w, opened, t0, dropped, again } = await droppedAndFlushedAgain(t);
  w.double.mineOne(dropped.transactionHash);
  w.clock.advanceTo(t0 + 4_000);
  await w.until(
    async () => ((await recordedSweepsOf(w, opened)).sweeps.every((s) => s.length === 1) ? true : undefined),
    'the dropped flush recorded',
  );
  t.deepEqual(
    (await recordedSweepsOf(w, opened)).open,
    opened.map(() => [true, [again.transactionHash], again.transactionHash]),
    'still shown as being swept by the re-flush, whose gas is not known yet',
  );
  // dropAfterMs after the re-flush was sent: dropped, and nothing is left to flush.
  w.clock.advanceTo(t0 + 6_000);
  await w.until(async () => ((await w.pendingDeposits()).length === 0 ? true : undefined), 'the re-flush dropped');
  const recorded = await recordedSweepsOf(w, opened);
  t.deepEqual(
    recorded.sweeps,
    opened.map(() => [[dropped.transactionHash, 1]]),
  );
  t.is(recorded.gasUsed, dropped.gasUsed);
  t.is(w.double.flushes.length, 2, 'no flush for deposits already swept');
  t.false(
    w.logged.some((line) => line.includes('holds nothing on chain')),
    w.logged.join('\n'),
  );
});

test('a flush dropped as not mined in time, then found mined as the copy of its re-flush recorded first (that took its nonce), is counted once in the metrics', async (t) => {
  const metrics = createPrometheusMetrics();
  const { w, t0, unmined: dropped } = await startedUnmined(t, metrics);
  // Dropped at t0 + 3 s and flushed again at once; the re-flush is mined and recorded there and then.
  w.clock.advanceTo(t0 + 3_000);
  await w.until(async () => ((await w.pendingDeposits()).length === 0 ? true : undefined), 're-flushed, recorded');
  const again = w.double.flushes[1]!.result!;
  w.double.mineInPlace(dropped.transactionHash, again.transactionHash);
  w.clock.advanceTo(t0 + 4_000);
  await w.until(
    async () =>
      w.logged.some((line) => line.startsWith(`sweep transaction ${dropped.transactionHash} on weir-testnet, dropped`))
        ? true
        : undefined,
    'the dropped flush looked up again',
  );
  const scraped = (await metrics.scrape()).split('\n');
  t.true(
    scraped.includes('weir_sweep_transactions_total{network="weir-testnet",outcome="swept"} 1'),
    scraped.join('\n'),
  );
  t.true(scraped.includes('weir_sweep_transactions_total{network="weir-testnet",outcome="dropped"} 1'));
  t.true(scraped.includes(`weir_sweep_gas_used_total{network="weir-testnet"} ${again.gasUsed}`));
});

test('after a restart, a flush dropped as not mined in time and mined later is still looked up, and recorded with its gas', async (t) => {
  const { w, opened, dropped, again } = await droppedAndFlushedAgain(t);
  t.deepEqual(
    (await w.sweeps.find({ lookingUp: true })).map((d) => d.lateDrops?.map((l) => l.transactionHash)),
    opened.map(() => [dropped.transactionHash]),
    'the drop is recorded as looked up still',
  );
  w.double.mineOne(dropped.transactionHash);
  await w.restartSweeper();
  await w.until(
    async () => ((await recordedSweepsOf(w, opened)).sweeps.every((s) => s.length === 1) ? true : undefined),
    'the dropped flush recorded by the process after the restart',
  );
  const recorded = await recordedSweepsOf(w, opened);
  t.deepEqual(
    recorded.sweeps,
    opened.map(() => [[dropped.transactionHash, 1]]),
  );
  t.is(recorded.gasUsed, dropped.gasUsed, 'its gas is in the reports');
  t.is(recorded.gasCost, dropped.gasCost);
  t.deepEqual(
    recorded.open,
    opened.map(() => [true, [again.transactionHash], again.transactionHash]),
    'the re-flush is still looked up',
  );
  t.deepEqual(await w.sweeps.find({ lookingUp: true }), [], 'no longer looked up once recorded');
  t.is(w.double.flushes.length, 2);
});

test('the late drops an earlier process recorded are read from the read model once per process, not at each turn (lookingUp is no indexed field: each read goes over every sweeps document)', async (t) => {
  const { w, opened, t0, dropped } = await droppedAndFlushedAgain(t);
  t.is(w.lateDropReads.length, 1, 'many turns, one read');
  w.double.mineOne(dropped.transactionHash);
  await w.restartSweeper();
  await w.until(
    async () => ((await recordedSweepsOf(w, opened)).sweeps.every((s) => s.length === 1) ? true : undefined),
    'the dropped flush recorded by the process after the restart',
  );
  w.clock.advanceTo(t0 + 4_000);
  await w.settledUntil(t0 + 5_000, 'the re-flush looked up again in 1 s');
  t.is(w.lateDropReads.length, 2, 'the process after the restart reads them once too');
});

test('a flush dropped as not mined in time and never mined, on a network where no later flush is mined, is looked up for lateDropLookUpMs after it was dropped, then no longer', async (t) => {
  const { w, opened, t0, unmined: dropped } = await startedUnmined(t);
  // Emptied by someone else meanwhile: nothing is flushed again, so no later flush of the network is mined.
  for (const { depositAddress } of opened) w.double.emptyElsewhere(depositAddress);
  const lookingUp = async () => (await w.sweeps.find({ lookingUp: true })).length;
  w.clock.advanceTo(t0 + 3_000);
  await w.until(async () => ((await lookingUp()) === 2 ? true : undefined), 'dropped for its age, looked up');
  t.is(w.double.flushes.length, 1, 'nothing flushed again');
  // Dropped at t0 + 3 s; lateDropLookUpMs (10 s) after, it is looked up a last time and given up.
  w.clock.advanceTo(t0 + 13_000);
  await w.until(async () => ((await lookingUp()) === 0 ? true : undefined), 'no longer looked up');
  t.true(
    w.logged.some((line) =>
      line.startsWith(
        `sweep transaction ${dropped.transactionHash} on weir-testnet, dropped as not mined in time, is still not mined 10 s after: no longer looked up`,
      ),
    ),
    w.logged.join('\n'),
  );
  t.is(w.double.flushes.length, 1);
});

/** The session's events about its sweeps' transfers: FundsSwept and TransfersFoundSwept, with what each says was moved. */
async function movedOf(w: Awaited<ReturnType<typeof sweeperWorld>>, sessionId: string) {
  const events = await w.weir.eventStore.readStream(`checkout_session-${sessionId}`);
  return events.flatMap((event) => {
    const data = event.data as {
      sweep?: { transactionHash: string; transferIds: string[]; moved?: unknown };
      transactionHash?: string;
      transferIds?: string[];
      moved?: unknown;
    };
    if (event.type === 'FundsSwept') {
      const { transactionHash, transferIds, moved } = data.sweep!;
      return [{ type: event.type, transactionHash, transferIds, moved }];
    }
    if (event.type === 'TransfersFoundSwept')
      return [
        { type: event.type, transactionHash: data.transactionHash, transferIds: data.transferIds, moved: data.moved },
      ];
    return [];
  });
}

test('a transfer mined before a flush but confirmed after it was recorded is recorded as moved by that flush (it sends the whole balance), with its amount: the deposit is not pending, nor taken as emptied by someone else', async (t) => {
  const metrics = createPrometheusMetrics();
  const w = await sweeperWorld(t, metrics);
  const s = await w.openSession();
  await w.pay(s.depositAddress, '1000000');
  // Part 2 is mined before the flush, its block not final yet when the sweeper flushes.
  const second = await w.mine(s.depositAddress, '2000000');
  const t0 = w.clock.now();
  w.sweeper.start();
  await w.until(async () => ((await w.sessions.get(s.id))!.sweeps.length === 1 ? true : undefined), 'part 1 swept');
  t.is(w.double.flushes.length, 1);
  const flush = w.double.flushes[0]!.result!;
  t.true(Number(flush.blockNumber) > second.blockNumber, 'the flush was mined after part 2');
  await second.final();
  await w.until(
    async () => ((await w.sessions.get(s.id))!.sweeps[0]!.transferIds.length === 2 ? true : undefined),
    'part 2 recorded as moved by the flush',
  );
  const session = (await w.sessions.get(s.id))!;
  const [first, later] = session.payments.map((p) => p.transferId);
  const asset = session.payments[0]!.asset.address;
  t.deepEqual(session.sweeps[0]!.transferIds, [first, later]);
  t.deepEqual(await movedOf(w, s.id), [
    {
      type: 'FundsSwept',
      transactionHash: flush.transactionHash,
      transferIds: [first],
      moved: [{ asset, amountRaw: '1000000' }],
    },
    {
      type: 'TransfersFoundSwept',
      transactionHash: flush.transactionHash,
      transferIds: [later],
      moved: [{ asset, amountRaw: '2000000' }],
    },
  ]);
  await w.until(async () => ((await w.pendingDeposits()).length === 0 ? true : undefined), 'nothing pending');
  const transaction = await w.weir.readStore
    .collection<TransactionDoc>(TRANSACTIONS)
    .get(sweepTransactionId(s.id, flush.transactionHash));
  t.like(transaction, { status: 'swept', amountRaw: '3000000' }, 'the transaction shows all it moved');
  // Looked at again later: nothing to flush, nothing said of a flush Weir has no record of.
  for (let i = 1; i <= 5; i++) w.clock.advanceTo(t0 + i * 4_000);
  await w.until(async () => ((await w.pendingDeposits()).length === 0 ? true : undefined), 'still nothing pending');
  t.is(w.double.flushes.length, 1);
  t.deepEqual(
    w.logged.filter((line) => line.includes('holds nothing on chain though')),
    [],
  );
  const scraped = (await metrics.scrape()).split('\n');
  t.false(
    scraped.some((line) => line.startsWith('weir_sweeps_pending{network="weir-testnet"}') && !line.endsWith(' 0')),
    scraped.filter((line) => line.startsWith('weir_sweeps_pending')).join('\n'),
  );
});

test('a transfer mined before a flush and confirmed while the flush is in flight is recorded as moved by it once it is mined', async (t) => {
  const w = await sweeperWorld(t);
  const s = await w.openSession();
  await w.pay(s.depositAddress, '1000000');
  const t0 = w.clock.now();
  w.double.leaveNextUnmined();
  w.sweeper.start();
  await w.settledUntil(t0 + 1_000, 'the flush in flight, looked up later');
  const second = await w.mine(s.depositAddress, '2000000');
  await second.final();
  await w.until(async () => {
    const { payments } = (await w.sessions.get(s.id))!;
    return payments.length === 2 && payments.every((p) => p.status === 'confirmed') ? true : undefined;
  }, 'part 2 confirmed');
  w.double.mineUnmined();
  w.clock.advanceTo(t0 + 1_000);
  await w.until(async () => ((await w.pendingDeposits()).length === 0 ? true : undefined), 'nothing pending');
  const session = (await w.sessions.get(s.id))!;
  const transferIds = session.payments.map((p) => p.transferId);
  t.deepEqual(
    session.sweeps.map((sweep) => sweep.transferIds),
    [transferIds],
  );
  t.deepEqual(
    (await movedOf(w, s.id)).map(({ type, transferIds: ids, moved }) => [type, ids, moved]),
    [['FundsSwept', transferIds, [{ asset: session.payments[0]!.asset.address, amountRaw: '3000000' }]]],
  );
  t.is(w.double.flushes.length, 1);
});

test('a transfer mined in the block of a flush and confirmed after it, the deposit read empty, is recorded as moved by that flush', async (t) => {
  const w = await sweeperWorld(t);
  const s = await w.openSession();
  await w.pay(s.depositAddress, '1000000');
  // Part 2 is in the block the flush is mined in, ahead of it.
  const second = await w.mine(s.depositAddress, '2000000', w.double.head() + 1);
  w.sweeper.start();
  await w.until(async () => ((await w.sessions.get(s.id))!.sweeps.length === 1 ? true : undefined), 'part 1 swept');
  const flush = w.double.flushes[0]!.result!;
  t.is(Number(flush.blockNumber), second.blockNumber);
  await second.final();
  await w.until(
    async () => ((await w.sessions.get(s.id))!.sweeps[0]!.transferIds.length === 2 ? true : undefined),
    'part 2 recorded as moved by the flush',
  );
  await w.until(async () => ((await w.pendingDeposits()).length === 0 ? true : undefined), 'nothing pending');
  t.deepEqual(
    (await movedOf(w, s.id)).map(({ type, transactionHash }) => [type, transactionHash]),
    [
      ['FundsSwept', flush.transactionHash],
      ['TransfersFoundSwept', flush.transactionHash],
    ],
  );
  t.is(w.double.flushes.length, 1);
  t.deepEqual(
    w.logged.filter((line) => line.includes('holds nothing on chain though')),
    [],
  );
  t.true(
    w.logged.some((line) => line.includes(`moved by sweep transaction ${flush.transactionHash}`)),
    w.logged.join('\n'),
  );
});

test("a transfer mined after Weir's last flush of a deposit that someone else's flush emptied is not recorded as swept by Weir's: the deposit is seen empty, as before", async (t) => {
  const w = await sweeperWorld(t);
  const s = await w.openSession();
  await w.pay(s.depositAddress, '1000000');
  const t0 = w.clock.now();
  w.sweeper.start();
  await w.until(async () => ((await w.sessions.get(s.id))!.sweeps.length === 1 ? true : undefined), 'part 1 swept');
  const flush = w.double.flushes[0]!.result!;
  const second = await w.mine(s.depositAddress, '2000000', Number(flush.blockNumber) + 1);
  w.double.emptyElsewhere(s.depositAddress);
  await second.final();
  await w.settledUntil(t0 + 1_000, 'seen empty: its first backoff');
  t.deepEqual(await w.pendingDeposits(), [s.depositAddress]);
  t.is(w.logged.filter((line) => line.includes('holds nothing on chain')).length, 1);
  t.deepEqual(
    (await movedOf(w, s.id)).map(({ type }) => type),
    ['FundsSwept'],
  );
  t.is((await w.sessions.get(s.id))!.sweeps[0]!.transferIds.length, 1);
  t.is(w.double.flushes.length, 1);
});
