import { startFakeJsonRpc } from '../../../test/support/fake-json-rpc.ts';
import { createRecoveryReads } from '../../app/payment-intents.ts';
import test, { type ExecutionContext } from 'ava';
import { paymentFixture, sessionFixture } from '../../../machines/checkout-session.fixture.ts';
import type { SessionPayment } from '../../../machines/checkout-session.types.ts';
import { createInProcessBus } from '../../bus/in-process-bus.ts';
import { depositAddressKey } from '../../projections/checkout-sessions.projection.ts';
import {
  COLLECTIONS,
  type ChainPaymentDoc,
  type CheckoutSessionDoc,
  type DepositAddressDoc,
} from '../../projections/collections.ts';
import type { AdvanceListener, ProjectionRunner } from '../../projections/projection-runner.ts';
import { createEmbeddedReadStore } from '../../read-store/embedded-read-store.ts';
import { WeirError } from '../../shared/errors.ts';
import { transferId, type ChainTransferMessage } from '../chain-messages.ts';
import { defineEvmNetwork } from './networks/define-network.ts';
import { createNetworkRegistry } from './networks/registry.ts';
import { createTransactionRecovery, evmRecoveryRail } from './recover-transaction.ts';

/**
 * A recovery hands a transfer in a block not final yet to the network's follower. A follower that
 * never takes it (its RPC node hangs) must not hold the HTTP request: after the adoption timeout
 * the recovery answers 503 follower_unavailable, a late end of that adoption is only logged, and
 * the same recovery tried again works. The chain is a JSON-RPC server of this test (one native
 * payment in block 10, head 10: 1 of 3 confirmations); time is the test's own.
 */

const CHAIN_ID = 73_571;
const NETWORK = 'recovery-adopt';
const PAY_TO = '0x00000000000000000000000000000000000d3b05';
const TX = `0x${'ab'.repeat(32)}`;
const BLOCK_HASH = `0x${'cd'.repeat(32)}`;
/** A token the network lists, and the session's deposit address for it. */
const USDC = '0x000000000000000000000000000000000000a5Dc';
const PAY_USDC = '0x00000000000000000000000000000000000d3b06';

const network = defineEvmNetwork({
  network: NETWORK,
  chainId: CHAIN_ID,
  name: 'Recovery adopt test',
  environment: 'test',
  nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
  explorer: { name: 'none', txUrl: 'http://127.0.0.1/tx/{hash}' },
  confirmations: 3,
  confirmationsSource: 'this test',
  blockTimeMs: 1_000,
  assets: [
    { symbol: 'ETH', name: 'Ether', currency: 'eth', address: 'native', decimals: 18 },
    { symbol: 'USDC', name: 'USD Coin', currency: 'usdc', address: USDC, decimals: 6 },
  ],
});

/** A smart wallet the transaction pays, which pays the deposit address on in an internal call. */
const WALLET = '0x00000000000000000000000000000000000a11e7';

/** What the chain of a test holds: see `startChain`. */
type ChainOptions = { internal?: boolean; tokenLog?: boolean; traces?: boolean; to?: string };

/**
 * Answers the three reads of a recovery (receipt, block with transactions, head), single or
 * batched; with `internal`, the transaction pays WALLET, which pays on after an ecrecover (the code
 * and call-trace reads of a recovery of an internal transfer). `tokenLog`: the transaction also
 * moves 7 USDC to PAY_USDC (a batch payout paying in a token and in coin); `traces: false`: the
 * node has no debug API; `to`: whom the transaction calls instead.
 */
async function startChain(t: ExecutionContext, options: ChainOptions): Promise<string> {
  const { internal = false, tokenLog = false, traces = true } = options;
  const word = (hex: string) => `0x${hex.slice(2).padStart(64, '0')}`;
  const results: Record<string, unknown> = {
    eth_getTransactionReceipt: {
      transactionHash: TX,
      blockHash: BLOCK_HASH,
      blockNumber: '0xa',
      status: '0x1',
      logs: tokenLog
        ? [
            {
              address: USDC,
              topics: [
                '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef',
                word(WALLET),
                word(PAY_USDC),
              ],
              data: word('0x7'),
              blockNumber: '0xa',
              blockHash: BLOCK_HASH,
              transactionHash: TX,
              transactionIndex: '0x0',
              logIndex: '0x0',
            },
          ]
        : [],
    },
    eth_getBlockByNumber: {
      number: '0xa',
      hash: BLOCK_HASH,
      parentHash: `0x${'ef'.repeat(32)}`,
      transactions: [
        {
          hash: TX,
          transactionIndex: '0x0',
          from: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8',
          to: options.to ?? (internal ? WALLET : PAY_TO),
          value: '0x5',
        },
      ],
    },
    eth_blockNumber: '0xa',
    // WALLET is a contract; PAY_TO a deposit address not deployed yet.
    eth_getCode: internal ? '0x6080' : '0x',
    debug_traceTransaction: {
      type: 'CALL',
      from: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8',
      to: WALLET,
      value: '0x5',
      calls: [
        { type: 'STATICCALL', from: WALLET, to: '0x0000000000000000000000000000000000000001' },
        { type: 'CALL', from: WALLET, to: PAY_TO, value: '0x5' },
      ],
    },
  };
  if (!traces) delete results.debug_traceTransaction;
  return startFakeJsonRpc(t, (method) => {
    if (!(method in results)) throw new Error(`the method ${method} does not exist/is not available`);
    return results[method];
  });
}

/** Items in the order they came, and a wait for the nth: the test waits on events, never on time. */
function recorded<T>() {
  const items: T[] = [];
  const waiters: (() => void)[] = [];
  return {
    items,
    push(item: T): void {
      items.push(item);
      for (const wake of waiters.splice(0)) wake();
    },
    async until(found: (items: readonly T[]) => boolean): Promise<void> {
      while (!found(items)) await new Promise<void>((resolve) => waiters.push(resolve));
    },
  };
}

/** A delay the test ends by hand: `elapse()` ends the waits running (neither ended nor aborted). */
function controlledDelay() {
  const started = recorded<number>();
  const running = new Set<() => void>();
  return {
    started,
    running,
    delay: (ms: number, signal: AbortSignal) =>
      new Promise<void>((resolve, reject) => {
        running.add(resolve);
        signal.addEventListener('abort', () => {
          running.delete(resolve);
          reject(signal.reason);
        });
        started.push(ms);
      }),
    elapse: () => {
      for (const end of [...running]) {
        running.delete(end);
        end();
      }
    },
  };
}

/** An adoption the test ends by hand (or never). */
function deferred() {
  let resolve: () => void = () => undefined;
  let reject: (error: Error) => void = () => undefined;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/**
 * `internal`: the session is paid by an internal call; `payments`: what it already records;
 * `elsewhere`: indexes of the transaction that another tenant's session records (another move).
 */
async function world(
  t: ExecutionContext,
  options: ChainOptions & { payments?: SessionPayment[]; elsewhere?: number[] } = {},
) {
  const rpcUrl = await startChain(t, options);
  const readStore = createEmbeddedReadStore();
  const session: CheckoutSessionDoc = {
    ...sessionFixture({
      payments: options.payments ?? [],
      addresses: [
        {
          id: 'addr-eth',
          checkoutSessionId: sessionFixture().id,
          network: NETWORK,
          paymentAddress: PAY_TO,
          merchantAddress: '0x5eA1fEE5eA1fEE5eA1fEE5eA1fEE5eA1fEE5eA1f',
          gas: '0',
          gasAmount: '0',
          asset: {
            id: `${NETWORK}:eth`,
            name: 'Ether',
            symbol: 'ETH',
            currency: 'eth',
            chainId: CHAIN_ID,
            address: 'native',
            decimals: 18,
          },
        },
        {
          id: 'addr-usdc',
          checkoutSessionId: sessionFixture().id,
          network: NETWORK,
          paymentAddress: PAY_USDC,
          merchantAddress: '0x5eA1fEE5eA1fEE5eA1fEE5eA1fEE5eA1fEE5eA1f',
          gas: '0',
          gasAmount: '0',
          asset: {
            id: `${NETWORK}:usdc`,
            name: 'USD Coin',
            symbol: 'USDC',
            currency: 'usdc',
            chainId: CHAIN_ID,
            address: USDC,
            decimals: 6,
          },
        },
      ],
    }),
    _id: sessionFixture().id,
  };
  await readStore.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions).put(session);
  for (const address of [PAY_TO, PAY_USDC])
    await readStore.collection<DepositAddressDoc>(COLLECTIONS.depositAddresses).put({
      _id: depositAddressKey(NETWORK, address),
      network: NETWORK,
      address,
      checkoutSessionId: session.id,
      organizationId: session.organizationId,
      environment: 'test',
    });
  for (const logIndex of options.elsewhere ?? [])
    await readStore.collection<ChainPaymentDoc>(COLLECTIONS.chainPayments).put({
      _id: transferId({ network: NETWORK, transactionHash: TX, logIndex }),
      network: NETWORK,
      blockNumber: 10,
      blockHash: BLOCK_HASH,
      status: 'confirmed',
      checkoutSessionId: 'cs_of_another_tenant',
      organizationId: 'org_another',
      environment: 'test',
    });
  const listeners = new Set<AdvanceListener>();
  const unused = (): never => {
    throw new Error('not used by a recovery');
  };
  const projections: ProjectionRunner = {
    onAdvanced: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    waitFor: async () => undefined,
    start: unused,
    rebuild: unused,
    onDocumentsChanged: unused,
    position: () => null,
    health: unused,
    stop: unused,
  };
  /** What the matcher and the projections would make of an adopted transfer: its payment, pending. */
  const recordPending = async (transfer: ChainTransferMessage): Promise<void> => {
    await readStore.collection<ChainPaymentDoc>(COLLECTIONS.chainPayments).put({
      _id: transferId(transfer),
      network: NETWORK,
      blockNumber: transfer.blockNumber,
      blockHash: transfer.blockHash,
      status: 'pending',
      checkoutSessionId: session.id,
      organizationId: session.organizationId,
      environment: 'test',
    });
    for (const listener of listeners) listener(1n, new Set([COLLECTIONS.chainPayments]));
  };
  const bus = createInProcessBus();
  t.teardown(() => bus.close());
  const adoptions = recorded<{ transfers: readonly ChainTransferMessage[]; done: ReturnType<typeof deferred> }>();
  const follower = {
    adoptTransfers(transfers: readonly ChainTransferMessage[]) {
      const done = deferred();
      adoptions.push({ transfers, done });
      return done.promise;
    },
  };
  const time = controlledDelay();
  const lines = recorded<string>();
  const recovery = createTransactionRecovery({
    rail: evmRecoveryRail(
      createNetworkRegistry({ networks: [network], rpc: { [CHAIN_ID]: { http: [rpcUrl], ws: [] } } }),
    ),
    bus,
    reads: createRecoveryReads({ readStore, projections, eventStore: { headPosition: async () => null } }),
    clock: { now: () => Date.parse('2026-01-01T00:30:00.000Z') },
    followers: new Map([[NETWORK, follower]]),
    delay: time.delay,
    log: (line) => lines.push(line),
  });
  const recover = () =>
    recovery.recover({
      organizationId: session.organizationId,
      environment: 'test',
      chainId: CHAIN_ID,
      transactionHash: TX,
    });
  return { recover, adoptions, time, lines, recordPending };
}

const OLD_CODE_HANGS = 'the recovery waited for the follower without a timeout of its own';
const lateLine = (lines: readonly string[]) => lines.some((line) => line.includes('after the recovery had timed out'));

test('a follower that never takes the transfer: 503 follower_unavailable after the adoption timeout (30 s by default), and a retry works', async (t) => {
  t.timeout(10_000, OLD_CODE_HANGS);
  const w = await world(t);
  const first = w.recover();
  await w.adoptions.until((items) => items.length === 1);
  await w.time.started.until((items) => items.length === 1);
  t.deepEqual(w.time.started.items, [30_000]);
  w.time.elapse();
  const error = await t.throwsAsync(first, { instanceOf: WeirError });
  t.is(error?.statusCode, 503);
  t.is(error?.code, 'follower_unavailable');
  t.regex(error?.message ?? '', /recovery-adopt did not take the transfer within 30 s; try again/);
  t.true(
    w.lines.items.some((line) => /did not take 1 recovered transfer\(s\) within 30000 ms/.test(line)),
    w.lines.items.join('\n'),
  );

  // The same recovery again, with the follower answering this time: the transfer is shown pending.
  const retry = w.recover();
  await w.adoptions.until((items) => items.length === 2);
  const [late, again] = w.adoptions.items;
  t.deepEqual(again?.transfers, late?.transfers, 'the same transfers: adopting them again changes nothing more');
  await w.recordPending(again!.transfers[0]!);
  again!.done.resolve();
  const recovered = await retry;
  t.is(recovered.outcome, 'in_process');
  t.regex(recovered.message, /3 blocks\); the checkout session is updated then, with no further recovery/);
  t.is(w.time.started.items.length, 2);
  t.is(w.time.running.size, 0, 'the timeout of an adoption taken in time is aborted');

  // The first hand-over ends long after its request was answered: logged, nothing else.
  late!.done.resolve();
  await w.lines.until(lateLine);
  t.regex(
    w.lines.items.at(-1) ?? '',
    /took 1 recovered transfer\(s\) after the recovery had timed out; nothing to undo/,
  );
});

test('an adoption that fails after the timeout is only logged', async (t) => {
  t.timeout(10_000, OLD_CODE_HANGS);
  const w = await world(t);
  const first = w.recover();
  await w.time.started.until((items) => items.length === 1);
  w.time.elapse();
  await t.throwsAsync(first, { instanceOf: WeirError, message: /try again in a moment/ });
  w.adoptions.items[0]!.done.reject(new Error('the follower stopped before it published the adopted transfers'));
  await w.lines.until(lateLine);
  t.regex(
    w.lines.items.at(-1) ?? '',
    /failed 1 recovered transfer\(s\) after the recovery had timed out: the follower stopped/,
  );
});

test('a follower that refuses at once is a 503 without waiting for the timeout', async (t) => {
  t.timeout(10_000);
  const w = await world(t);
  const first = w.recover();
  await w.adoptions.until((items) => items.length === 1);
  w.adoptions.items[0]!.done.reject(new Error('cannot adopt transfers: the follower is stopping'));
  const error = await t.throwsAsync(first, { instanceOf: WeirError });
  t.is(error?.code, 'follower_unavailable');
  t.regex(error?.message ?? '', /cannot take the transfer now; try again in a moment/);
  t.true(
    w.lines.items.some((line) => line.includes('the follower is stopping')),
    w.lines.items.join('\n'),
  );
});

test('an internal transfer the session already records under another index (read from another node) is handed over with that id: credited once; an id another tenant records for the transaction is never handed out', async (t) => {
  t.timeout(10_000);
  const recorded = (logIndex: number): SessionPayment => ({
    ...paymentFixture(transferId({ network: NETWORK, transactionHash: TX, logIndex }), '500000000'),
    network: NETWORK,
    chainId: CHAIN_ID,
    transactionHash: TX,
    logIndex,
    toAddress: PAY_TO,
    amountRaw: '5',
    status: 'pending',
    detectedAt: '2026-01-01T00:10:00.000Z',
    confirmedAt: null,
    late: false,
  });
  const handed = async (payments: SessionPayment[], elsewhere: number[] = []) => {
    const w = await world(t, { internal: true, payments, elsewhere });
    const recovering = w.recover();
    await w.adoptions.until((items) => items.length === 1);
    const { transfers, done } = w.adoptions.items[0]!;
    await w.recordPending(transfers[0]!);
    done.resolve();
    t.is((await recovering).outcome, 'in_process');
    return transfers.map((transfer) => transfer.logIndex);
  };
  t.deepEqual(await handed([]), [-2], 'the first value-moving frame below the top level; the ecrecover is not counted');
  t.deepEqual(await handed([recorded(-3)]), [-3], 'recorded as -3 (a node that counted the ecrecover): kept');
  t.deepEqual(
    await handed([], [-2, -1, 0]),
    [-3],
    "-2 is another tenant's payment from the same transaction (an older numbering): not handed out again",
  );
});

/** Recovers, records what the follower is handed as pending, and answers the transfers' indexes and the outcome. */
async function handedOver(w: Awaited<ReturnType<typeof world>>) {
  const recovering = w.recover();
  await w.adoptions.until((items) => items.length === 1);
  const { transfers, done } = w.adoptions.items[0]!;
  for (const transfer of transfers) await w.recordPending(transfer);
  done.resolve();
  return { indexes: transfers.map((transfer) => transfer.logIndex), recovery: await recovering };
}

test('a transaction that pays one deposit address in a token and another in coin sent on by a contract: both are credited', async (t) => {
  t.timeout(10_000);
  const { indexes, recovery } = await handedOver(await world(t, { internal: true, tokenLog: true }));
  t.deepEqual(indexes, [0, -2], 'the Transfer log and the internal CALL');
  t.is(recovery.outcome, 'in_process');
  t.notRegex(recovery.message, /could not be read/);
});

test("a node without traces still credits what the transaction's value and logs show, and says its internal transfers could not be read", async (t) => {
  t.timeout(10_000);
  const w = await world(t, { internal: true, tokenLog: true, traces: false });
  const { indexes, recovery } = await handedOver(w);
  t.deepEqual(indexes, [0], 'the Transfer log, no 409');
  t.is(recovery.outcome, 'in_process');
  t.regex(
    recovery.message,
    /waits for network confirmation .*\. Its internal transfers \(native coin sent on by a contract .*\) could not be read: no RPC endpoint of recovery-adopt serves debug_traceTransaction .*does not exist\/is not available.* to WEIR_RPC_73571, then recover again$/,
  );
  t.true(w.lines.items.some((line) => line.includes('debug_traceTransaction')));

  // A transfer of a token the network lists calls nothing that could pay on: no trace is asked, nothing is said.
  const plain = await handedOver(await world(t, { tokenLog: true, traces: false, to: USDC }));
  t.deepEqual(plain.indexes, [0]);
  t.notRegex(plain.recovery.message, /could not be read/);

  // Nothing but internal calls could pay: without a trace that is still a 409 saying so.
  const error = await t.throwsAsync(
    world(t, { internal: true, traces: false }).then((only) => only.recover()),
    {
      instanceOf: WeirError,
    },
  );
  t.is(error?.code, 'internal_transfers_unavailable');
});
