import { randomUUID } from 'node:crypto';
import test, { type ExecutionContext } from 'ava';
import {
  createPublicClient,
  createWalletClient,
  custom,
  defineChain,
  erc20Abi,
  getAddress,
  HttpRequestError,
  keccak256,
  TimeoutError,
  type Address,
  type Hash,
  type Hex,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { eventually } from '../../../test/support/api-client.ts';
import { chainPublisher, randomHash } from '../../../test/support/chain-publisher.ts';
import { forwarderTestRail } from '../../../test/support/forwarder-rail.ts';
import { sweepEventsOf as sweepEventsOfStream } from '../../../test/support/sweep-events.ts';
import { hardhatAccounts, startHardhatNode, type HardhatNode } from '../../../test/support/hardhat-node.ts';
import { createMerchant, MERCHANT_WALLET, sessionRequest, startTestWeir } from '../../../test/support/weir-harness.ts';
import type { CommandHandler } from '../../actors/command-handler.ts';
import { COLLECTIONS, type CheckoutSessionDoc } from '../../projections/collections.ts';
import { SWEEPS, type SweepDoc } from '../../projections/sweeps.projection.ts';
import { createManualClock } from '../../shared/clock.ts';
import {
  SweepNodeError,
  SweepReceiptLostError,
  SweepRejectedError,
  SweepRevertedError,
} from '../../sweeper/sweep-errors.ts';
import { createSweeper, type SignedSweep } from '../../sweeper/sweeper.ts';
import { TEST_NETWORK } from '../test-rail.ts';
import { testTokenAbi } from './contracts/abis.ts';
import { createEvmWriteClients, type EvmWriteClients } from './contracts/clients.ts';
import { deployForwarderFactory, deployTestToken } from './contracts/deploy-contracts.ts';
import { localNodeTransport } from './devnet/local-node-transport.ts';
import { deriveDepositAddress } from './contracts/deposit-address.ts';
import { ForwarderFlushError } from './contracts/errors.ts';
import { nodeHasTransaction } from './contracts/flush-forwarders.ts';
import { createEvmSweepExecutor, sweepFailureOf } from './evm-sweep-executor.ts';

const url = 'http://127.0.0.1:8545';
const rejected = (cause: unknown) =>
  new ForwarderFlushError('sweeping 1 deposit address(es) was rejected', undefined, undefined, { cause });

test('the node failing (5xx, 429, no answer, timeout, connection refused) is a SweepNodeError, also behind the flush error', (t) => {
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8545'), { code: 'ECONNREFUSED' });
  for (const cause of [
    new HttpRequestError({ url, status: 502 }),
    new HttpRequestError({ url, status: 429 }),
    new HttpRequestError({ url }),
    new TimeoutError({ body: {}, url }),
    refused,
  ]) {
    t.true(sweepFailureOf(rejected(cause)) instanceof SweepNodeError, cause.message);
  }
});

test("a revert is the transaction's: mined, it carries its gas as a SweepRevertedError; refused before mining, it stays as it came", (t) => {
  const paid = { gasUsed: 30_000n, gasCost: 300_000_000_000_000n };
  const mined = sweepFailureOf(new ForwarderFlushError('sweep transaction 0xab reverted', '0xab', paid));
  t.true(mined instanceof SweepRevertedError);
  t.deepEqual((mined as SweepRevertedError).transaction, { transactionHash: '0xab', ...paid });
  const notMined = rejected(new Error('reverted with NativeTransferFailed(0x1, 1000)'));
  t.is(sweepFailureOf(notMined), notMined);
  const badRequest = rejected(new HttpRequestError({ url, status: 400 }));
  t.is(sweepFailureOf(badRequest), badRequest);
});

test('a flush sent whose receipt was not had carries its hash as a SweepReceiptLostError, even when the node timed out', (t) => {
  const lost = sweepFailureOf(
    new ForwarderFlushError('sweep transaction 0xab was sent but its receipt could not be had', '0xab', undefined, {
      cause: new TimeoutError({ body: {}, url }),
    }),
  );
  t.true(lost instanceof SweepReceiptLostError);
  t.is((lost as SweepReceiptLostError).transactionHash, '0xab');
});

test('a signed flush the node refused (and does not have) is a SweepRejectedError with its hash: never sent', (t) => {
  const refused = sweepFailureOf(
    new ForwarderFlushError('sweep transaction 0xab was refused by the node', '0xab', undefined, {
      cause: new Error('nonce too low'),
      refusal: 'refused',
    }),
  );
  t.true(refused instanceof SweepRejectedError);
  t.is((refused as SweepRejectedError).transactionHash, '0xab');
});

// ---------------------------------------------------------------------------------------------
// On a real hardhat node: the flush is recorded before the node has it, whenever the process dies.
// ---------------------------------------------------------------------------------------------

type Chain = { node: HardhatNode; deployer: EvmWriteClients; factory: Address; usdc: Address };

let chain: Chain | undefined;

test.before(async () => {
  // The test network's chain id, so sessions on the test network are sessions on this node.
  const node = await startHardhatNode({ chainId: TEST_NETWORK.chainId });
  try {
    const deployer = createEvmWriteClients({
      rpcUrl: node.rpcUrl,
      chainId: node.chainId,
      privateKey: hardhatAccounts[0].privateKey,
    });
    const factory = await deployForwarderFactory(deployer);
    const usdc = await deployTestToken(deployer, { name: 'Test USD Coin', symbol: 'USDC', decimals: 6 });
    chain = { node, deployer, factory: factory.address, usdc: usdc.address };
  } catch (error) {
    await node.stop();
    throw error;
  }
});

test.after.always(async () => {
  await chain?.node.stop();
});

function onChain(): Chain {
  if (chain === undefined) throw new Error('the hardhat node did not start: see test.before');
  return chain;
}

const SWEEPER_KEY = hardhatAccounts[4].privateKey;
const sweeperAddress = () => privateKeyToAccount(SWEEPER_KEY).address;

/** Mints `amount` USDC units to `to` on the node, as a payer's transfer would put them there. */
async function mintUsdc(to: Address, amount: bigint): Promise<void> {
  const { deployer, usdc } = onChain();
  const hash = await deployer.walletClient.writeContract({
    address: usdc,
    abi: testTokenAbi,
    functionName: 'mint',
    args: [to, amount],
  });
  await deployer.publicClient.waitForTransactionReceipt({ hash });
}

const usdcOf = (owner: Address) =>
  onChain().deployer.publicClient.readContract({
    address: onChain().usdc,
    abi: erc20Abi,
    functionName: 'balanceOf',
    args: [owner],
  });

/** The sweeper account's transactions mined so far (its next nonce). */
const minedNonce = () => onChain().deployer.publicClient.getTransactionCount({ address: sweeperAddress() });

/** A transaction of the sweeper account sent behind the sweeper's back: it takes the next nonce. */
async function takeTheSweepersNonce(): Promise<void> {
  const other = createEvmWriteClients({
    rpcUrl: onChain().node.rpcUrl,
    chainId: onChain().node.chainId,
    privateKey: SWEEPER_KEY,
  });
  const hash = await other.walletClient.sendTransaction({ to: sweeperAddress(), value: 0n });
  await other.publicClient.waitForTransactionReceipt({ hash });
}

/**
 * The sweeper account's executor on the node, and a deposit of 5 USDC for a fresh merchant,
 * ready to flush; `nonceBefore` is the account's next nonce before anything is sent.
 */
async function aFundedDeposit() {
  const { node, factory, usdc } = onChain();
  const clients = createEvmWriteClients({ rpcUrl: node.rpcUrl, chainId: node.chainId, privateKey: SWEEPER_KEY });
  const executor = createEvmSweepExecutor({ clients, factoryAddress: factory });
  const merchantAddress = privateKeyToAccount(generatePrivateKey()).address;
  const checkoutSessionId = randomUUID();
  const depositAddress = deriveDepositAddress({
    factoryAddress: factory,
    merchantAddress,
    sessionId: checkoutSessionId,
  });
  await mintUsdc(depositAddress, 5_000_000n);
  const request = { checkoutSessionId, depositAddress, merchantAddress, assets: [usdc.toLowerCase()] };
  return { clients, executor, merchantAddress, depositAddress, request, nonceBefore: await minedNonce() };
}

test.serial(
  'a flush is signed and handed to beforeSend before the node has it; the transaction mined is the one signed',
  async (t) => {
    const { clients, executor, merchantAddress, request, nonceBefore } = await aFundedDeposit();
    const seen: { signed: SignedSweep; nodeHadIt: boolean; pendingNonce: number }[] = [];

    const result = await executor.flush([request], async (signed) => {
      seen.push({
        signed,
        nodeHadIt: await nodeHasTransaction(clients, signed.transactionHash as Hash),
        pendingNonce: await clients.publicClient.getTransactionCount({
          address: sweeperAddress(),
          blockTag: 'pending',
        }),
      });
    });
    t.is(seen.length, 1);
    const [{ signed, nodeHadIt, pendingNonce }] = seen as [(typeof seen)[number]];
    t.false(nodeHadIt, 'the node did not have the transaction while it was being recorded');
    t.is(pendingNonce, nonceBefore, 'nothing of the account was pending either');
    t.is(keccak256(signed.signedTransaction as Hex), signed.transactionHash as Hash);
    t.is(result.transactionHash, signed.transactionHash);
    t.is(await usdcOf(merchantAddress), 5_000_000n);
    t.is(await minedNonce(), nonceBefore + 1);
  },
);

test.serial(
  'a beforeSend that throws (the broadcast could not be recorded) means nothing is sent, and its error comes back as it was',
  async (t) => {
    const { clients, executor, depositAddress, request, nonceBefore } = await aFundedDeposit();
    // An error whose code looks like the node's: it is still the hook's, not a SweepNodeError.
    const refused = Object.assign(new Error('event store unavailable'), { code: 'ECONNRESET' });
    let signedHash: string | undefined;

    const error = await t.throwsAsync(
      executor.flush([request], async (signed) => {
        signedHash = signed.transactionHash;
        throw refused;
      }),
    );
    t.is(error, refused);
    t.false(await nodeHasTransaction(clients, signedHash as Hash), 'the node never had it');
    t.is(
      await clients.publicClient.getTransactionCount({ address: sweeperAddress(), blockTag: 'pending' }),
      nonceBefore,
      'nothing sent: the nonce is still free',
    );
    t.is(await usdcOf(depositAddress), 5_000_000n, 'the deposit still holds the money');
  },
);

/**
 * The wire between the sweeper and the node. `onSend`, once, sees the next eth_sendRawTransaction
 * first and decides what becomes of it; once `dead`, nothing goes through any more (the process
 * is gone): no request to the node, no command to the log.
 */
type Wire = { dead: boolean; onSend: ((send: () => Promise<unknown>) => Promise<unknown>) | null };

/** The process is killed as the transaction is about to leave: the node never has it. */
const killedBeforeTheNodeHasIt = (wire: Wire) => async () => {
  wire.dead = true;
  throw new Error('killed before the transaction left');
};

/** The process is killed the moment the node has taken the transaction, before it hears back. */
const killedOnceTheNodeHasIt = (wire: Wire) => async (send: () => Promise<unknown>) => {
  await send();
  wire.dead = true;
  throw new Error('killed before the answer came back');
};

/** Clients of the sweeper account whose JSON-RPC goes through `wire` to the node. */
function clientsThrough(wire: Wire): EvmWriteClients {
  const { node } = onChain();
  const chainOfNode = defineChain({
    id: node.chainId,
    name: 'hardhat',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [node.rpcUrl] } },
  });
  const direct = localNodeTransport(node.rpcUrl)({ chain: chainOfNode, retryCount: 0 });
  const forward = (request: { method: string; params?: unknown }) =>
    direct.request(request as Parameters<typeof direct.request>[0]);
  const transport = custom(
    {
      async request(request: { method: string; params?: unknown }) {
        if (wire.dead) throw new Error('the process is dead');
        const onSend = wire.onSend;
        if (request.method !== 'eth_sendRawTransaction' || onSend === null) return forward(request);
        wire.onSend = null;
        return onSend(() => forward(request));
      },
    },
    { retryCount: 0 },
  );
  return {
    publicClient: createPublicClient({ chain: chainOfNode, transport, pollingInterval: 50 }),
    walletClient: createWalletClient({
      chain: chainOfNode,
      transport,
      pollingInterval: 50,
      account: privateKeyToAccount(SWEEPER_KEY),
    }),
  };
}

/**
 * A Weir (log, projections, read models) on the manual clock whose test network is the node (its
 * USDC the token deployed there, its deposit addresses the factory's forwarders), and a sweeper
 * with the EVM executor whose wire to the node and whose commands die with `wire`. `restart`
 * stops it and starts a fresh one, with nothing in memory, on the same log and node.
 */
async function sweeperOnNode(t: ExecutionContext) {
  const { node, factory, usdc } = onChain();
  const { network, rail } = forwarderTestRail(factory, usdc);
  const clock = createManualClock();
  const weir = await startTestWeir(t, {}, { clock, rails: [rail] });
  const merchant = await createMerchant(weir.url);
  const publisher = chainPublisher(weir.bus, network);
  const sessions = weir.readStore.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions);
  const wire: Wire = { dead: false, onSend: null };
  const logged: string[] = [];
  const dyingCommands: CommandHandler = {
    ...weir.commands,
    async handle(aggregate, id, command, ctx) {
      if (wire.dead) throw new Error('the process is dead');
      return weir.commands.handle(aggregate, id, command, ctx);
    },
  };
  const sweeperWith = (clients: EvmWriteClients, commands: CommandHandler) => {
    const created = createSweeper({
      clock,
      readStore: weir.readStore,
      projections: weir.projections,
      commands,
      executors: new Map([[network.network, createEvmSweepExecutor({ clients, factoryAddress: factory })]]),
      batchDelayMs: 0,
      retryAfterMs: 1_000,
      maxRetryAfterMs: 4_000,
      dropAfterMs: 3_000,
      log: (line) => logged.push(line),
    });
    t.teardown(() => created.stop());
    return created;
  };
  const sweeper = sweeperWith(clientsThrough(wire), dyingCommands);
  let blockNumber = 100;

  /** A session paid 3 USDC, on chain and as the follower reports it (confirmed). */
  const openAndPay = async () => {
    const created = await merchant.api.post<{ id: string; addresses: { paymentAddress: string }[] }>(
      '/api/v1/checkout/sessions',
      sessionRequest(),
    );
    t.is(created.status, 200, JSON.stringify(created.body));
    const depositAddress = getAddress(created.body.addresses[0]!.paymentAddress);
    await mintUsdc(depositAddress, 3_000_000n);
    const blockHash = randomHash();
    blockNumber += 1;
    await publisher.transfer({ to: depositAddress, amount: '3000000', blockNumber, blockHash });
    await publisher.final(blockNumber, blockHash);
    return { id: created.body.id, depositAddress };
  };
  /** Two paid sessions, both waiting to be swept. */
  const twoPaid = async () => {
    const opened = [await openAndPay(), await openAndPay()];
    const sweeps = weir.readStore.collection<SweepDoc>(SWEEPS);
    await eventually(
      async () => ((await sweeps.find({ pending: true })).length === 2 ? true : undefined),
      'two deposits to sweep',
      10_000,
    );
    return opened;
  };
  const sweepEventsOf = (id: string) => sweepEventsOfStream(weir.eventStore, id);
  const untilSwept = (opened: { id: string }[], what: string) =>
    eventually(
      async () => {
        const docs = await Promise.all(opened.map(({ id }) => sessions.get(id)));
        return docs.every((doc) => doc!.sweeps.length > 0) ? true : undefined;
      },
      what,
      10_000,
    );
  return {
    clock,
    node,
    wire,
    logged,
    sweeper,
    twoPaid,
    sweepEventsOf,
    untilSwept,
    untilDead: () => eventually(async () => (wire.dead ? true : undefined), 'the process killed', 10_000),
    /** The killed process is gone (its sweeper stopped); a fresh one starts on the same log and node. */
    async restart() {
      await sweeper.stop();
      const healthy = createEvmWriteClients({ rpcUrl: node.rpcUrl, chainId: node.chainId, privateKey: SWEEPER_KEY });
      const fresh = sweeperWith(healthy, weir.commands);
      fresh.start();
      return fresh;
    },
  };
}

test.serial(
  'a sweeper killed the moment the node took its flush leaves it recorded: a fresh one finds it mined and records FundsSwept once per session',
  async (t) => {
    const w = await sweeperOnNode(t);
    const opened = await w.twoPaid();
    const merchantBefore = await usdcOf(getAddress(MERCHANT_WALLET));
    const t0 = w.clock.now();
    w.wire.onSend = killedOnceTheNodeHasIt(w.wire);
    w.sweeper.start();
    await w.untilDead();
    await w.restart();

    await w.untilSwept(opened, 'FundsSwept recorded by the fresh sweeper');
    t.is(w.clock.now(), t0, 'looked up at once, not after dropAfterMs');
    t.is((await usdcOf(getAddress(MERCHANT_WALLET))) - merchantBefore, 6_000_000n);
    const [first, second] = await Promise.all(opened.map(({ id }) => w.sweepEventsOf(id)));
    const hash = first![0]![1]!;
    t.deepEqual(first, [
      ['SweepBroadcast', hash],
      ['FundsSwept', hash],
    ]);
    t.deepEqual(second, first, 'the same transaction on both sessions, recorded once each');
  },
);

test.serial(
  'a sweeper killed after recording its flush, before the node had it: a fresh one sends the very same transaction again and records FundsSwept once per session',
  async (t) => {
    const w = await sweeperOnNode(t);
    const opened = await w.twoPaid();
    const nonceBefore = await minedNonce();
    const t0 = w.clock.now();
    w.wire.onSend = killedBeforeTheNodeHasIt(w.wire);
    w.sweeper.start();
    await w.untilDead();
    const [recorded] = await w.sweepEventsOf(opened[0]!.id);
    t.is(recorded?.[0], 'SweepBroadcast');
    const hash = recorded![1]! as Hash;
    t.false(await nodeHasTransaction(onChain().deployer, hash), 'the node never had it');
    await w.restart();

    await eventually(
      async () =>
        w.logged.some((line) => line.includes(`${hash} on weir-testnet`) && line.includes('sent again'))
          ? true
          : undefined,
      'sent again by the fresh sweeper',
      10_000,
    );
    w.clock.advanceTo(t0 + 1_000);
    await w.untilSwept(opened, 'FundsSwept recorded once mined');
    for (const { id } of opened) {
      t.deepEqual(await w.sweepEventsOf(id), [
        ['SweepBroadcast', hash],
        ['FundsSwept', hash],
      ]);
    }
    t.is(await minedNonce(), nonceBefore + 1, 'one transaction of the sweeper mined: the one recorded');
    t.is(await usdcOf(opened[0]!.depositAddress), 0n);
  },
);

test.serial(
  'a sweeper killed after recording its flush, before the node had it, whose nonce another transaction took: a fresh one drops it at once and sweeps the deposits once',
  async (t) => {
    const w = await sweeperOnNode(t);
    const opened = await w.twoPaid();
    const t0 = w.clock.now();
    w.wire.onSend = killedBeforeTheNodeHasIt(w.wire);
    w.sweeper.start();
    await w.untilDead();
    const hash = (await w.sweepEventsOf(opened[0]!.id))[0]![1]!;
    await takeTheSweepersNonce();
    await w.restart();

    await w.untilSwept(opened, 'swept by a new flush');
    t.is(w.clock.now(), t0, 'not after dropAfterMs');
    const events = await Promise.all(opened.map(({ id }) => w.sweepEventsOf(id)));
    const swept = events[0]!.at(-1)![1]!;
    t.not(swept, hash);
    for (const sessionEvents of events) {
      t.deepEqual(sessionEvents, [
        ['SweepBroadcast', hash],
        ['SweepDropped', hash],
        ['SweepBroadcast', swept],
        ['FundsSwept', swept],
      ]);
    }
    t.false(await nodeHasTransaction(onChain().deployer, hash as Hash), 'the dropped transaction can never be mined');
  },
);

test.serial(
  'a flush the node refuses once signed (its nonce taken meanwhile) is recorded as dropped at once, and its deposits are swept',
  async (t) => {
    const w = await sweeperOnNode(t);
    const opened = await w.twoPaid();
    const t0 = w.clock.now();
    w.wire.onSend = async (send) => {
      await takeTheSweepersNonce();
      return send();
    };
    w.sweeper.start();

    await w.untilSwept(opened, 'both swept');
    t.is(w.clock.now(), t0, 'not after dropAfterMs');
    const events = await Promise.all(opened.map(({ id }) => w.sweepEventsOf(id)));
    const refused = events[0]![0]![1]!;
    t.deepEqual(
      events.map((sessionEvents) => sessionEvents.slice(0, 2)),
      opened.map(() => [
        ['SweepBroadcast', refused],
        ['SweepDropped', refused],
      ]),
    );
    for (const sessionEvents of events) {
      t.is(sessionEvents.filter(([type]) => type === 'FundsSwept').length, 1);
      t.not(sessionEvents.at(-1)![1], refused);
    }
    t.false(await nodeHasTransaction(onChain().deployer, refused as Hash));
    t.true(
      w.logged.some((line) => line.startsWith(`sweep transaction ${refused} on weir-testnet was refused by the node`)),
      w.logged.join('\n'),
    );
  },
);
