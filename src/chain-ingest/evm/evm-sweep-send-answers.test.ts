import { randomUUID } from 'node:crypto';
import test, { type ExecutionContext } from 'ava';
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  custom,
  defineChain,
  erc20Abi,
  getAddress,
  keccak256,
  parseTransaction,
  TimeoutError,
  type Address,
  type Chain,
  type Hash,
  type Hex,
  type Transport,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { eventually } from '../../../test/support/api-client.ts';
import { chainPublisher, randomHash } from '../../../test/support/chain-publisher.ts';
import { createFakeEvmNode } from '../../../test/support/fake-evm-node.ts';
import { forwarderTestRail } from '../../../test/support/forwarder-rail.ts';
import { recordingClock, sweepEventsOf } from '../../../test/support/sweep-events.ts';
import { hardhatAccounts } from '../../../test/support/hardhat-node.ts';
import { createMerchant, MERCHANT_WALLET, sessionRequest, startTestWeir } from '../../../test/support/weir-harness.ts';
import { COLLECTIONS, type CheckoutSessionDoc } from '../../projections/collections.ts';
import { SWEEPS, type SweepDoc } from '../../projections/sweeps.projection.ts';
import { createManualClock } from '../../shared/clock.ts';
import { SweepReceiptLostError, SweepWaitingError } from '../../sweeper/sweep-errors.ts';
import { createSweeper } from '../../sweeper/sweeper.ts';
import { TEST_NETWORK } from '../test-rail.ts';
import { testTokenAbi } from './contracts/abis.ts';
import { createEvmWriteClients, type EvmWriteClients } from './contracts/clients.ts';
import { deployForwarderFactory, deployTestToken } from './contracts/deploy-contracts.ts';
import { sendErrorKindOf, type SendErrorKind } from './contracts/flush-forwarders.ts';
import { startAnvilNode } from './devnet/anvil-node.ts';
import { localNodeTransport } from './devnet/local-node-transport.ts';
import { createEvmSweepExecutor } from './evm-sweep-executor.ts';

/*
 * A sweep whose eth_sendRawTransaction is answered "already known", "nonce too low" or
 * "replacement transaction underpriced", or not at all though it reached the node: the sweeper
 * records what really happened to the transaction it signed, and never signs a second one for
 * the same deposits while the first may still be mined.
 */

const SWEEPER_KEY = hardhatAccounts[4].privateKey;
const sweeperAddress = privateKeyToAccount(SWEEPER_KEY).address;
const FACTORY: Address = '0x00000000000000000000000000000000000fac70';
const USDC: Address = '0x00000000000000000000000000000000000a11ce';

const testChain = (rpcUrl: string): Chain =>
  defineChain({
    id: TEST_NETWORK.chainId,
    name: TEST_NETWORK.name,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });

/** The sweeper account's clients over `transport`. */
function sweeperClients(transport: Transport, chain: Chain): EvmWriteClients {
  return {
    publicClient: createPublicClient({ chain, transport, pollingInterval: 10 }),
    walletClient: createWalletClient({
      chain,
      transport,
      pollingInterval: 10,
      account: privateKeyToAccount(SWEEPER_KEY),
    }),
  };
}

/** The fake node (see fake-evm-node.ts) on the test network, and the sweeper's clients to it. */
function fakeNode() {
  const node = createFakeEvmNode({ chainId: TEST_NETWORK.chainId, factory: FACTORY });
  return { node, clients: sweeperClients(node.transport, testChain('http://fake')) };
}

/** A flush request for one deposit (of a session paid in USDC), for the executor alone. */
const oneRequest = () => ({
  checkoutSessionId: randomUUID(),
  depositAddress: '0x0000000000000000000000000000000000000001',
  merchantAddress: MERCHANT_WALLET,
  assets: [USDC],
});

/** A receipt is waited for this long at most here: a flush left pending is then looked up by its hash. */
const RECEIPT_TIMEOUT_MS = 2_000;

const nonceOf = (raw: Hex) => parseTransaction(raw as Parameters<typeof parseTransaction>[0]).nonce;

/**
 * A Weir on a manual clock whose test network is swept through `clients` (its deposits the
 * forwarders of `factory`, its USDC `usdc`), and a sweeper on it; `fund` puts a payment's money on
 * the deposit address. The sweeper's clock records when it asks to look again.
 */
async function sweeperWorld(
  t: ExecutionContext,
  chainSide: { clients: EvmWriteClients; factory: Address; usdc: Address; fund?: (to: Address) => Promise<void> },
) {
  const { network, rail } = forwarderTestRail(chainSide.factory, chainSide.usdc);
  const clock = createManualClock();
  const { clock: sweeperClock, scheduled: lookAgainAt } = recordingClock(clock);
  const weir = await startTestWeir(t, {}, { clock, rails: [rail] });
  const merchant = await createMerchant(weir.url);
  const publisher = chainPublisher(weir.bus, network);
  const logged: string[] = [];
  const sweeper = createSweeper({
    clock: sweeperClock,
    readStore: weir.readStore,
    projections: weir.projections,
    commands: weir.commands,
    executors: new Map([
      [
        network.network,
        createEvmSweepExecutor({
          clients: chainSide.clients,
          factoryAddress: chainSide.factory,
          receiptTimeoutMs: RECEIPT_TIMEOUT_MS,
        }),
      ],
    ]),
    batchDelayMs: 0,
    retryAfterMs: 1_000,
    maxRetryAfterMs: 4_000,
    dropAfterMs: 60_000,
    log: (line) => logged.push(line),
  });
  t.teardown(() => sweeper.stop());
  const sessions = weir.readStore.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions);
  const until = <T>(probe: () => Promise<T | undefined>, what: string) => eventually(probe, what, 10_000);
  let blockNumber = 100;

  /** `count` sessions paid 3 USDC each (confirmed), all waiting to be swept. */
  async function paidSessions(count: number) {
    const opened: { id: string; depositAddress: Address }[] = [];
    for (let i = 0; i < count; i += 1) {
      const created = await merchant.api.post<{ id: string; addresses: { paymentAddress: string }[] }>(
        '/api/v1/checkout/sessions',
        sessionRequest(),
      );
      t.is(created.status, 200, JSON.stringify(created.body));
      const depositAddress = getAddress(created.body.addresses[0]!.paymentAddress);
      await chainSide.fund?.(depositAddress);
      const blockHash = randomHash();
      blockNumber += 1;
      await publisher.transfer({ to: depositAddress, amount: '3000000', blockNumber, blockHash });
      await publisher.final(blockNumber, blockHash);
      opened.push({ id: created.body.id, depositAddress });
    }
    const sweeps = weir.readStore.collection<SweepDoc>(SWEEPS);
    await until(async () => ((await sweeps.find({ pending: true })).length === count ? true : undefined), 'to sweep');
    return opened;
  }

  return {
    clock,
    logged,
    sweeper,
    paidSessions,
    sweepEventsOf: (id: string) => sweepEventsOf(weir.eventStore, id),
    sessionOf: async (id: string) => (await sessions.get(id))!,
    /** Waits until the sweeper asks to look again at `at`: it has done what was due until then. */
    settledUntil: (at: number, what: string) => until(async () => (lookAgainAt.at(-1) === at ? true : undefined), what),
    untilSwept: (opened: { id: string }[], what: string) =>
      until(async () => {
        const docs = await Promise.all(opened.map(({ id }) => sessions.get(id)));
        return docs.every((doc) => doc!.sweeps.length > 0) ? true : undefined;
      }, what),
  };
}

/** Every session's sweep events are `expected`, the same transactions on all of them. */
async function assertSweepEvents(
  t: ExecutionContext,
  w: Awaited<ReturnType<typeof sweeperWorld>>,
  opened: { id: string }[],
  expected: [string, string][],
) {
  for (const { id } of opened) t.deepEqual(await w.sweepEventsOf(id), expected);
}

/** Every session comes to be swept by `hash`, recorded once, and no other transaction was ever sent (`sends`, raw). */
async function assertSweptOnceBy(
  t: ExecutionContext,
  w: Awaited<ReturnType<typeof sweeperWorld>>,
  opened: { id: string }[],
  hash: Hash,
  sends: Hex[],
) {
  await w.untilSwept(opened, `swept by ${hash}`);
  await assertSweepEvents(t, w, opened, [
    ['SweepBroadcast', hash],
    ['FundsSwept', hash],
  ]);
  t.deepEqual([...new Set(sends.map((raw) => keccak256(raw)))], [hash], 'no second transaction');
}

test('a node error answering a send is read by its words, as geth, erigon, reth, anvil, hardhat, Besu, Nethermind and OpenEthereum put them', (t) => {
  const said: [string, SendErrorKind][] = [
    ['already known', 'already-known'],
    ['ALREADY_EXISTS: already known', 'already-known'],
    ['INTERNAL_ERROR: existing tx with same hash', 'already-known'],
    ['transaction already imported', 'already-known'],
    ['Known transaction: 0x5e8e…', 'already-known'],
    ['Transaction with the same hash was already imported.', 'already-known'],
    ['AlreadyKnown', 'already-known'],
    ['nonce too low: address 0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc, tx: 3 state: 4', 'nonce-too-low'],
    ['Nonce too low. Expected nonce to be 4 but got 3.', 'nonce-too-low'],
    ['Transaction nonce is too low. Try incrementing the nonce.', 'nonce-too-low'],
    ['OldNonce, Current nonce: 4, nonce of rejected tx: 3', 'nonce-too-low'],
    ['replacement transaction underpriced', 'replacement-underpriced'],
    ['Replacement transaction underpriced', 'replacement-underpriced'],
    [
      'Transaction gas price is too low. There is another transaction with same nonce in the queue.',
      'replacement-underpriced',
    ],
    ['could not replace existing tx', 'replacement-underpriced'],
    ['insufficient funds for gas * price + value', 'other'],
    ['unknown transaction type', 'other'],
    ['max fee per gas less than block base fee', 'other'],
  ];
  for (const [message, kind] of said) t.is(sendErrorKindOf(message), kind, message);
});

test('a first send that times out but reached the node, sent again and answered "already known", is recorded swept once, with no second transaction', async (t) => {
  const { node, clients } = fakeNode();
  node.settings.automine = false;
  node.settings.showsByHash = false;
  node.answerNextSends({ kind: 'noAnswer', take: true });
  const w = await sweeperWorld(t, { clients, factory: FACTORY, usdc: USDC });
  const opened = await w.paidSessions(2);
  const t0 = w.clock.now();

  w.sweeper.start();
  await w.settledUntil(t0 + 1_000, 'the look-up in 1 s');
  const hash = keccak256(node.sends[0]!);
  t.regex(
    w.logged.at(-1)!,
    new RegExp(`^the receipt of sweep transaction ${hash} \\(2 deposit address\\(es\\)\\).* was not had`),
  );

  w.clock.advanceTo(t0 + 1_000);
  await w.settledUntil(t0 + 2_000, 'looked up, sent again, looked up again in 1 s');
  t.deepEqual(node.sends, [node.sends[0], node.sends[0]], 'the very same transaction sent again');
  t.regex(
    w.logged.at(-1)!,
    new RegExp(`^sweep transaction ${hash} on weir-testnet is not mined 1 s after it was sent; not flushing`),
  );

  node.mine();
  w.clock.advanceTo(t0 + 2_000);
  await assertSweptOnceBy(t, w, opened, hash, node.sends);
});

/**
 * The node answers the first send with an error though it has the transaction (an earlier attempt
 * reached it: a provider retried it), mined at once, and does not show it by hash: the sweep is
 * the transaction sent, recorded swept, nothing dropped and no second one signed.
 */
const answeredThoughTaken = test.macro(async (t, code: number, message: string) => {
  const { node, clients } = fakeNode();
  node.settings.showsByHash = false;
  node.answerNextSends({ kind: 'error', code, message, take: true });
  const w = await sweeperWorld(t, { clients, factory: FACTORY, usdc: USDC });
  const opened = await w.paidSessions(2);

  w.sweeper.start();
  await w.untilSwept(opened, 'swept');
  const hash = keccak256(node.sends[0]!);
  await assertSweptOnceBy(t, w, opened, hash, node.sends);
  t.is(node.sends.length, 1, 'sent once');
  t.true(node.isMined(hash));
});

test(
  '"already known" (geth) answering the first send is the transaction sent: its receipt is waited for and FundsSwept recorded',
  answeredThoughTaken,
  -32000,
  'already known',
);
test(
  '"transaction already imported" (anvil) answering the first send is the transaction sent',
  answeredThoughTaken,
  -32003,
  'transaction already imported',
);
test(
  '"nonce too low" answering a send whose own transaction was mined with that nonce is the transaction sent: FundsSwept, nothing dropped',
  answeredThoughTaken,
  -32003,
  'nonce too low',
);

test('"nonce too low" with the nonce used by another transaction: the flush is dropped and the same deposits flushed again at once, in one transaction with the next nonce', async (t) => {
  const { node, clients } = fakeNode();
  const w = await sweeperWorld(t, { clients, factory: FACTORY, usdc: USDC });
  const opened = await w.paidSessions(2);
  const t0 = w.clock.now();
  // Another transaction of the sweeping account is mined between signing and sending.
  node.beforeNextSend(() => node.sendOther(sweeperAddress));

  w.sweeper.start();
  await w.untilSwept(opened, 'swept');
  t.is(w.clock.now(), t0, 'in the same round');
  t.is(node.sends.length, 2, 'the batch was not split: one flush again for both deposits');
  const [refused, swept] = node.sends.map((raw) => keccak256(raw)) as [Hash, Hash];
  t.is(nonceOf(node.sends[1]!), nonceOf(node.sends[0]!)! + 1);
  await assertSweepEvents(t, w, opened, [
    ['SweepBroadcast', refused],
    ['SweepDropped', refused],
    ['SweepBroadcast', swept],
    ['FundsSwept', swept],
  ]);
  t.true(
    w.logged.some((line) =>
      line.startsWith(`sweep transaction ${refused} on weir-testnet was refused by the node: another transaction`),
    ),
    w.logged.join('\n'),
  );
  t.false(
    w.logged.some((line) => line.includes('failed on its own')),
    'no deposit blamed',
  );
});

/**
 * A sweep whose send is answered "replacement transaction underpriced": another transaction of the
 * account, pending, took its nonce between signing and sending. It waits: looked up and sent again
 * each round, nothing dropped and nothing signed anew meanwhile.
 */
async function waitingBehindAnother(t: ExecutionContext) {
  const { node, clients } = fakeNode();
  node.settings.automine = false;
  const w = await sweeperWorld(t, { clients, factory: FACTORY, usdc: USDC });
  const opened = await w.paidSessions(2);
  const t0 = w.clock.now();
  let other: Hash | undefined;
  node.beforeNextSend(() => {
    other = node.sendOther(sweeperAddress);
  });

  w.sweeper.start();
  await w.settledUntil(t0 + 1_000, 'looked up in 1 s');
  const ours = keccak256(node.sends[0]!);
  t.regex(
    w.logged.at(-1)!,
    new RegExp(`^sweep transaction ${ours} .* was not taken by the node for now; not flushing`),
  );
  w.clock.advanceTo(t0 + 1_000);
  await w.settledUntil(t0 + 2_000, 'sent again, not taken, looked up in 1 s');
  t.regex(
    w.logged.at(-1)!,
    /\(the node did not take it again: another pending transaction of the account has its nonce\)/,
  );
  t.deepEqual(node.sends, [node.sends[0], node.sends[0]], 'the same transaction, nothing signed anew');
  await assertSweepEvents(t, w, opened, [['SweepBroadcast', ours]]);
  return { node, w, opened, t0, ours, other: other! };
}

/**
 * The pending transaction that held the flush's nonce leaves the pool unmined; the flush, looked
 * up at `at`, is sent again and taken, then recorded swept: the same transaction, once.
 */
async function sweptOnceTheOtherLeaves(
  t: ExecutionContext,
  { node, w, opened, ours, other }: Omit<Awaited<ReturnType<typeof waitingBehindAnother>>, 't0'>,
  at: number,
) {
  node.evict(other);
  node.settings.automine = true;
  w.clock.advanceTo(at);
  await w.settledUntil(at + 1_000, 'sent again, taken');
  w.clock.advanceTo(at + 1_000);
  await assertSweptOnceBy(t, w, opened, ours, node.sends);
}

test('"replacement transaction underpriced": the flush waits for the pending one; once that one is mined, it is dropped and the deposits flushed with the next nonce', async (t) => {
  const { node, w, opened, t0, ours, other } = await waitingBehindAnother(t);
  node.mine();
  t.true(node.isMined(other));
  node.settings.automine = true;

  w.clock.advanceTo(t0 + 2_000);
  await w.untilSwept(opened, 'swept by a new flush');
  t.is(node.sends.length, 4);
  const swept = keccak256(node.sends[3]!);
  t.is(nonceOf(node.sends[3]!), nonceOf(node.sends[0]!)! + 1);
  await assertSweepEvents(t, w, opened, [
    ['SweepBroadcast', ours],
    ['SweepDropped', ours],
    ['SweepBroadcast', swept],
    ['FundsSwept', swept],
  ]);
});

test('"replacement transaction underpriced": the flush waits for the pending one; once that one leaves the pool unmined, the same flush is taken and recorded swept', async (t) => {
  const waiting = await waitingBehindAnother(t);
  await sweptOnceTheOtherLeaves(t, waiting, waiting.t0 + 2_000);
});

test('"replacement transaction underpriced": a flush waiting behind a pending one past the drop delay is not dropped: it keeps waiting, and once that one leaves the pool it is taken and recorded swept', async (t) => {
  const { node, w, opened, t0, ours, other } = await waitingBehindAnother(t);
  // The other stays pending past the drop delay (60 s here): the flush still waits, nothing signed anew.
  w.clock.advanceTo(t0 + 60_000);
  await w.settledUntil(t0 + 61_000, 'still waiting, looked up again in 1 s');
  t.regex(
    w.logged.at(-1)!,
    new RegExp(
      `^sweep transaction ${ours} on weir-testnet is not mined 60 s after it was sent \\(the node did not take it again`,
    ),
  );
  await assertSweepEvents(t, w, opened, [['SweepBroadcast', ours]]);
  t.deepEqual([...new Set(node.sends)], [node.sends[0]], 'nothing signed anew');

  await sweptOnceTheOtherLeaves(t, { node, w, opened, ours, other }, t0 + 61_000);
});

test('a flush taken by the node and never mined is given up waiting for after the receipt bound injected: its receipt lost, its hash known', async (t) => {
  t.timeout(10_000, 'far less than the default bound of 180 s');
  const { node, clients } = fakeNode();
  node.settings.automine = false;
  const executor = createEvmSweepExecutor({ clients, factoryAddress: FACTORY, receiptTimeoutMs: 50 });
  const error = await t.throwsAsync(
    executor.flush([oneRequest()], async () => {}),
    { instanceOf: SweepReceiptLostError },
  );
  t.is(error.transactionHash, keccak256(node.sends[0]!));
  t.regex(error.message, /was sent but its receipt could not be had/);
  t.is(node.sends.length, 1);
});

test('"nonce too low" from a node that counts the nonce unused (its answers disagree) is no refusal: the flush waits, its hash known', async (t) => {
  const { node, clients } = fakeNode();
  node.answerNextSends({ kind: 'error', code: -32000, message: 'nonce too low', take: false });
  const executor = createEvmSweepExecutor({ clients, factoryAddress: FACTORY });
  const error = await t.throwsAsync(
    executor.flush([oneRequest()], async () => {}),
    { instanceOf: SweepWaitingError },
  );
  t.is(error.transactionHash, keccak256(node.sends[0]!));
  t.regex(error.message, /its answers disagree/);
  t.is(node.sends.length, 1);
});

/**
 * A sweeper world on anvil whose first send reaches the node and its answer is lost; the node's
 * answers to sends are kept (`sends`); pending transactions are not shown by hash, as some
 * providers do. Two sessions are paid (3 USDC each) and anvil's automine is turned off.
 */
async function anvilWithLostFirstAnswer(t: ExecutionContext) {
  const anvil = await startAnvilNode({ chainId: TEST_NETWORK.chainId });
  t.teardown(() => anvil.stop());
  const deployer = createEvmWriteClients({
    rpcUrl: anvil.rpcUrl,
    chainId: anvil.chainId,
    privateKey: hardhatAccounts[0].privateKey,
  });
  const factory = (await deployForwarderFactory(deployer)).address;
  const usdc = (await deployTestToken(deployer, { name: 'Test USD Coin', symbol: 'USDC', decimals: 6 })).address;
  const chain = testChain(anvil.rpcUrl);
  const testClient = createTestClient({ chain, mode: 'anvil', transport: localNodeTransport(anvil.rpcUrl) });

  const direct = localNodeTransport(anvil.rpcUrl)({ chain, retryCount: 0 });
  const sends: { raw: Hex; answer: string }[] = [];
  const transport = custom(
    {
      async request(request: { method: string; params?: unknown }) {
        const forward = () => direct.request(request as Parameters<typeof direct.request>[0]);
        if (request.method === 'eth_getTransactionByHash') return null;
        if (request.method !== 'eth_sendRawTransaction') return forward();
        const raw = (request.params as [Hex])[0];
        try {
          const hash = await forward();
          sends.push({ raw, answer: 'taken' });
          if (sends.length === 1) throw new TimeoutError({ body: request, url: anvil.rpcUrl });
          return hash;
        } catch (error) {
          if (!(error instanceof TimeoutError))
            sends.push({ raw, answer: (error as { details?: string }).details ?? '' });
          throw error;
        }
      },
    },
    { retryCount: 0 },
  );
  const clients = sweeperClients(transport, chain);
  const fund = async (to: Address) => {
    const hash = await deployer.walletClient.writeContract({
      address: usdc,
      abi: testTokenAbi,
      functionName: 'mint',
      args: [to, 3_000_000n],
    });
    await deployer.publicClient.waitForTransactionReceipt({ hash });
  };
  const w = await sweeperWorld(t, { clients, factory, usdc, fund });
  const opened = await w.paidSessions(2);
  const nonceBefore = await deployer.publicClient.getTransactionCount({ address: sweeperAddress });
  await testClient.setAutomine(false);
  const balanceOf = (holder: Address) =>
    deployer.publicClient.readContract({ address: usdc, abi: erc20Abi, functionName: 'balanceOf', args: [holder] });
  // The operator's own wallet on the sweeper key, straight to anvil (not through the sweeper's wire).
  const operator = createEvmWriteClients({ rpcUrl: anvil.rpcUrl, chainId: anvil.chainId, privateKey: SWEEPER_KEY });
  return { w, opened, sends, testClient, deployer, operator, nonceBefore, balanceOf };
}

test('on anvil, a flush whose first send reached the node unanswered is sent again, the very same transaction, answered "transaction already imported", and recorded swept once', async (t) => {
  const { w, opened, sends, testClient, deployer, nonceBefore, balanceOf } = await anvilWithLostFirstAnswer(t);
  const t0 = w.clock.now();

  w.sweeper.start();
  await w.settledUntil(t0 + 1_000, 'the look-up in 1 s');
  w.clock.advanceTo(t0 + 1_000);
  await w.settledUntil(t0 + 2_000, 'looked up, sent again, looked up again in 1 s');
  t.deepEqual(
    sends.map(({ answer }) => answer),
    ['taken', 'transaction already imported'],
    "anvil's words for a transaction it has pending",
  );
  t.is(sends[1]!.raw, sends[0]!.raw, 'the very same transaction');

  await testClient.mine({ blocks: 1 });
  w.clock.advanceTo(t0 + 2_000);
  await assertSweptOnceBy(
    t,
    w,
    opened,
    keccak256(sends[0]!.raw),
    sends.map(({ raw }) => raw),
  );
  t.is(
    await deployer.publicClient.getTransactionCount({ address: sweeperAddress }),
    nonceBefore + 1,
    'one transaction mined',
  );
  t.is(await balanceOf(getAddress(MERCHANT_WALLET)), 6_000_000n);
});

test('on anvil, a flush sped up by the operator (the same call, nonce and gas at a higher fee) while its outcome is looked up is recorded swept by the copy mined, with its gas, replacing the flush broadcast', async (t) => {
  const { w, opened, sends, testClient, deployer, operator, nonceBefore, balanceOf } =
    await anvilWithLostFirstAnswer(t);
  const t0 = w.clock.now();

  w.sweeper.start();
  await w.settledUntil(t0 + 1_000, 'the look-up in 1 s');
  const ours = keccak256(sends[0]!.raw);
  const flush = parseTransaction(sends[0]!.raw as Parameters<typeof parseTransaction>[0]);
  // The operator's wallet speeds it up: the same call with the same nonce and gas limit, paying more.
  const copy = await operator.walletClient.sendTransaction({
    to: flush.to!,
    data: flush.data,
    value: 0n,
    nonce: flush.nonce!,
    gas: flush.gas!,
    maxFeePerGas: flush.maxFeePerGas! * 2n,
    maxPriorityFeePerGas: flush.maxPriorityFeePerGas! * 2n + 1n,
  });
  await testClient.mine({ blocks: 1 });
  const receipt = await deployer.publicClient.getTransactionReceipt({ hash: copy });
  t.is(receipt.status, 'success');

  w.clock.advanceTo(t0 + 1_000);
  await w.untilSwept(opened, 'swept by the copy');
  await assertSweepEvents(t, w, opened, [
    ['SweepBroadcast', ours],
    ['FundsSwept', copy],
  ]);
  const swept = await Promise.all(opened.map(({ id }) => w.sessionOf(id)));
  t.deepEqual(
    swept.map((session) => session.sweeps.map(({ transactionHash, replaces }) => ({ transactionHash, replaces }))),
    [[{ transactionHash: copy, replaces: ours }], [{ transactionHash: copy, replaces: ours }]],
  );
  t.deepEqual(
    swept.map((session) => session.sweepsBroadcast),
    [[], []],
    'the flush broadcast ends with the copy',
  );
  const gasOf = (field: 'gasUsed' | 'gasCost') =>
    swept.reduce((sum, session) => sum + BigInt(session.sweeps[0]![field]), 0n);
  t.is(gasOf('gasUsed'), receipt.gasUsed, 'its actual gas, shared');
  t.is(gasOf('gasCost'), receipt.gasUsed * receipt.effectiveGasPrice);
  t.deepEqual(
    sends.map(({ raw }) => keccak256(raw)),
    [ours],
    'nothing flushed again',
  );
  t.is(await deployer.publicClient.getTransactionCount({ address: sweeperAddress }), nonceBefore + 1);
  t.is(await balanceOf(getAddress(MERCHANT_WALLET)), 6_000_000n);
});
