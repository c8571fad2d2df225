import test, { type ExecutionContext } from 'ava';
import { paymentFixture, sessionFixture } from '../../../machines/checkout-session.fixture.ts';
import type { AssetRef, CheckoutSession, SessionAddress } from '../../../machines/checkout-session.types.ts';
import { startFakeJsonRpc } from '../../../test/support/fake-json-rpc.ts';
import type { Bus } from '../../bus/bus.ts';
import { WeirError } from '../../shared/errors.ts';
import { transferId, type ChainMessage, type ChainTransferMessage } from '../chain-messages.ts';
import { createTransactionRecovery } from '../evm/recover-transaction.ts';
import { ERC20_TRANSFER_TOPIC } from '../evm/follower/get-transfer-logs.ts';
import type { RecoveryReads } from '../payment-intents.ts';
import type { RailFollower } from '../rail.ts';
import { evmToTron } from './address.ts';
import { TRON_LOCAL_CHAIN_ID, tronLocalNetwork } from './networks.ts';
import { tronRecoveryRail } from './recover-transaction.ts';
import { createTronRail, tronFollowedNetwork } from './tron-rail.ts';
import type { OfferedTronNetwork } from './tron-setup.ts';

/**
 * Recovery by transaction id on a Tron network: the EVM recovery behind the Tron address layer.
 * The node is a JSON-RPC server of this test answering as a Tron full node's eth_ methods do
 * (0x… addresses, 0x-prefixed ids): block 20 holds a USDT (TRC-20) payment and a TRX payment to
 * one deposit address. Sessions, deposit addresses and what is credited are in T… form.
 */

const DEPOSIT_HEX = '0x00000000000000000000000000000000000d3b05';
const USDT_HEX = '0x00000000000000000000000000000000000a5d70';
const PAYER_HEX = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
const DEPOSIT = evmToTron(DEPOSIT_HEX);
const USDT = evmToTron(USDT_HEX);
const USDC_HEX = `0x${'0c'.repeat(20)}`;
const UNLISTED_HEX = `0x${'0e'.repeat(20)}`;
const USDT_TX = `0x${'ab'.repeat(32)}`;
const TRX_TX = `0x${'cd'.repeat(32)}`;
const USDC_TX = `0x${'a1'.repeat(32)}`;
const UNLISTED_TX = `0x${'a2'.repeat(32)}`;
const ELSEWHERE_TX = `0x${'a3'.repeat(32)}`;
const TRC10_TX = `0x${'a4'.repeat(32)}`;
const BLOCK_HASH = `0x${'ef'.repeat(32)}`;
const BLOCK = 20;
const NETWORK = tronLocalNetwork({ usdt: USDT, usdc: evmToTron(USDC_HEX) }, { confirmations: 3 });
const word = (value: string) => `0x${value.replace(/^0x/, '').padStart(64, '0')}`;

/** The node: receipts and the block by the ids it knows, and a head the test moves. */
async function startNode(t: ExecutionContext) {
  let head = BLOCK;
  const receipt = (hash: string, logs: unknown[]) => ({
    transactionHash: hash,
    blockHash: BLOCK_HASH,
    blockNumber: `0x${BLOCK.toString(16)}`,
    status: '0x1',
    logs,
  });
  /** A TRC-20 Transfer of 25 units of `token` to the deposit address, the `index`th transaction of the block. */
  const transferLog = (token: string, hash: string, index: number) => ({
    address: token,
    topics: [ERC20_TRANSFER_TOPIC, word(PAYER_HEX), word(DEPOSIT_HEX)],
    data: word((25_000_000).toString(16)),
    blockNumber: `0x${BLOCK.toString(16)}`,
    blockHash: BLOCK_HASH,
    transactionHash: hash,
    transactionIndex: `0x${index.toString(16)}`,
    logIndex: `0x${index.toString(16)}`,
    removed: false,
  });
  const receipts: Record<string, unknown> = {
    [USDT_TX]: receipt(USDT_TX, [transferLog(USDT_HEX, USDT_TX, 0)]),
    [TRX_TX]: receipt(TRX_TX, []),
    [USDC_TX]: receipt(USDC_TX, [transferLog(USDC_HEX, USDC_TX, 2)]),
    [UNLISTED_TX]: receipt(UNLISTED_TX, [transferLog(UNLISTED_HEX, UNLISTED_TX, 3)]),
    [ELSEWHERE_TX]: receipt(ELSEWHERE_TX, []),
    [TRC10_TX]: receipt(TRC10_TX, []),
  };
  const sent = (hash: string, index: number, to: string, value = '0x0') => ({
    hash,
    transactionIndex: `0x${index.toString(16)}`,
    from: PAYER_HEX,
    to,
    value,
  });
  const block = {
    number: `0x${BLOCK.toString(16)}`,
    hash: BLOCK_HASH,
    parentHash: `0x${'12'.repeat(32)}`,
    transactions: [
      sent(USDT_TX, 0, USDT_HEX),
      sent(TRX_TX, 1, DEPOSIT_HEX, '0x989680'),
      sent(USDC_TX, 2, USDC_HEX),
      sent(UNLISTED_TX, 3, UNLISTED_HEX),
      sent(ELSEWHERE_TX, 4, `0x${'99'.repeat(20)}`, '0x989680'),
      // A TRC-10 transfer of 10 units: java-tron's eth_ methods show its token amount as `value`.
      sent(TRC10_TX, 5, DEPOSIT_HEX, '0x989680'),
    ],
  };
  const asked: string[] = [];
  const result = (method: string, params: unknown[]): unknown => {
    if (method === 'eth_getTransactionReceipt') {
      asked.push(String(params[0]));
      return receipts[String(params[0])] ?? null;
    }
    if (method === 'eth_getBlockByNumber') return block;
    if (method === 'eth_blockNumber') return `0x${head.toString(16)}`;
    throw new Error(`${method} is not served here`);
  };
  /** `wallet/gettransactionbyid`: the contract each transaction is (java-tron's HTTP API), `{}` for one it does not know. */
  const contracts: Record<string, string> = {
    [TRX_TX]: 'TransferContract',
    [ELSEWHERE_TX]: 'TransferContract',
    [TRC10_TX]: 'TransferAssetContract',
    [USDT_TX]: 'TriggerSmartContract',
    [USDC_TX]: 'TriggerSmartContract',
    [UNLISTED_TX]: 'TriggerSmartContract',
  };
  const url = await startFakeJsonRpc(t, result, (path, body) => {
    if (path !== '/wallet/gettransactionbyid') throw new Error(`${path} is not served here`);
    const type = contracts[`0x${String(body['value'])}`];
    return type === undefined ? {} : { txID: body['value'], raw_data: { contract: [{ type }] } };
  });
  return {
    url,
    asked,
    setHead: (number: number) => {
      head = number;
    },
  };
}

const assetOf = (symbol: 'USDT' | 'TRX'): AssetRef => {
  const asset = NETWORK.assets.find((a) => a.symbol === symbol)!;
  return {
    id: `${NETWORK.network}:${asset.currency}`,
    name: asset.name,
    symbol: asset.symbol,
    currency: asset.currency,
    chainId: TRON_LOCAL_CHAIN_ID,
    address: asset.address,
    decimals: asset.decimals,
  };
};

/**
 * A session taking USDT and TRX at DEPOSIT, and the read side of a matcher: what is published or
 * adopted is recorded on the session (pending, confirmed by its block's `final`, complete then).
 */
async function world(t: ExecutionContext) {
  const node = await startNode(t);
  const address = (id: string, symbol: 'USDT' | 'TRX'): SessionAddress => ({
    id,
    checkoutSessionId: sessionFixture().id,
    network: NETWORK.network,
    paymentAddress: DEPOSIT,
    merchantAddress: evmToTron(`0x${'5e'.repeat(20)}`),
    gas: '0',
    gasAmount: '0',
    asset: assetOf(symbol),
  });
  let session: CheckoutSession = sessionFixture({ addresses: [address('a-usdt', 'USDT'), address('a-trx', 'TRX')] });
  const listeners = new Set<() => void>();
  const advanced = () => {
    for (const listener of listeners) listener();
  };
  const record = (transfer: ChainTransferMessage): void => {
    const id = transferId(transfer);
    if (session.payments.some((p) => p.transferId === id)) return;
    const payment = {
      ...paymentFixture(id, '0'),
      network: transfer.network,
      chainId: transfer.chainId,
      transactionHash: transfer.transactionHash,
      blockNumber: transfer.blockNumber,
      blockHash: transfer.blockHash,
      fromAddress: transfer.from,
      toAddress: transfer.to,
      asset: session.addresses.find((a) => a.asset.address === transfer.asset.address)!.asset,
      amountRaw: transfer.amount,
      status: 'pending' as const,
      detectedAt: '2026-01-01T00:10:00.000Z',
      confirmedAt: null,
      late: false,
    };
    session = { ...session, payments: [...session.payments, payment] };
  };
  const published: ChainMessage[] = [];
  const bus: Bus = {
    async publish(_subject, data) {
      const message = JSON.parse(Buffer.from(data).toString('utf8')) as ChainMessage;
      published.push(message);
      if (message.type === 'transfer') record(message);
      if (message.type === 'final') {
        session = {
          ...session,
          status: 'complete',
          payments: session.payments.map((p) =>
            p.blockHash === message.blockHash ? { ...p, status: 'confirmed', confirmedAt: message.observedAt } : p,
          ),
        };
      }
      advanced();
    },
    consume: () => Promise.reject(new Error('not used by a recovery')),
    deleteDurable: () => Promise.reject(new Error('not used by a recovery')),
    close: async () => undefined,
  };
  const reads: RecoveryReads = {
    targetAt: async (network, at) =>
      network === NETWORK.network && at === DEPOSIT
        ? { checkoutSessionId: session.id, organizationId: session.organizationId, environment: 'test' }
        : null,
    session: async (id) => (id === session.id ? { ...session, _id: session.id } : null),
    paymentStatus: async (id) => session.payments.find((p) => p.transferId === id)?.status ?? null,
    recordedIndexes: async (_network, hash) =>
      session.payments.filter((p) => p.transactionHash === hash).map((p) => p.logIndex),
    onAdvanced: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    caughtUp: async () => undefined,
  };
  const adopted: ChainTransferMessage[][] = [];
  const follower = {
    async adoptTransfers(transfers: readonly ChainTransferMessage[]) {
      adopted.push([...transfers]);
      for (const transfer of transfers) record(transfer);
      advanced();
    },
  };
  const offered: OfferedTronNetwork = {
    network: NETWORK,
    endpoints: { http: [node.url], ws: [] },
    deployment: { create2: 'evm', factory: evmToTron(`0x${'fa'.repeat(20)}`) },
  };
  const deps = { bus, reads, clock: { now: () => Date.parse('2026-01-01T00:30:00.000Z') }, log: () => undefined };
  const request = (transactionHash: string) => ({
    organizationId: session.organizationId,
    environment: 'test' as const,
    chainId: TRON_LOCAL_CHAIN_ID,
    transactionHash,
  });
  return {
    node,
    published,
    adopted,
    session: () => session,
    request,
    /** Through the rail (as start-weir wires it), with no follower running. */
    railRecovery: createTronRail({ offered: [offered] }).recovery!({
      ...deps,
      followers: new Map<string, RailFollower>(),
    }),
    /** With the network's follower running: a block not final yet is handed to it. */
    followedRecovery: createTransactionRecovery({
      ...deps,
      rail: tronRecoveryRail([offered], tronFollowedNetwork),
      followers: new Map([[NETWORK.network, follower]]),
    }),
  };
}

test('a USDT payment is read from the receipt by its Tron id (no 0x, any case) and credited in T… form; the follower takes it while its block is not final', async (t) => {
  const w = await world(t);
  const recovered = await w.followedRecovery.recover(w.request(USDT_TX.slice(2).toUpperCase()));
  t.is(recovered.outcome, 'in_process');
  t.deepEqual(w.node.asked, [USDT_TX], 'the node is asked in the form its eth_ methods answer');
  t.is(w.adopted.length, 1);
  const [transfer] = w.adopted[0]!;
  t.like(transfer, {
    type: 'transfer',
    network: NETWORK.network,
    chainId: TRON_LOCAL_CHAIN_ID,
    transactionHash: USDT_TX,
    logIndex: 0,
    blockNumber: BLOCK,
    from: evmToTron(PAYER_HEX),
    to: DEPOSIT,
    amount: '25000000',
  });
  t.deepEqual(transfer!.asset, { address: USDT, symbol: 'USDT', decimals: 6 });
  t.is(w.published.length, 0, 'the follower publishes it, and owes its final');
});

test('a TRX payment is read from the transaction itself; once final it is published with its final and completes the session; recovered again, nothing changes', async (t) => {
  const w = await world(t);
  w.node.setHead(BLOCK + 5);
  const recovered = await w.railRecovery.recover(w.request(TRX_TX));
  t.is(recovered.outcome, 'complete', recovered.message);
  const transfers = w.published.filter((m): m is ChainTransferMessage => m.type === 'transfer');
  t.is(transfers.length, 1, 'the TRX payment only: the USDT log of the block is another transaction');
  t.like(transfers[0], {
    transactionHash: TRX_TX,
    logIndex: -1,
    from: evmToTron(PAYER_HEX),
    to: DEPOSIT,
    amount: '10000000',
    asset: { address: 'native', symbol: 'TRX', decimals: 6 },
  });
  t.deepEqual(
    w.published.filter((m) => m.type === 'final').map((m) => m.type === 'final' && m.blockNumber),
    [BLOCK],
  );
  t.deepEqual(
    w.session().payments.map((p) => [p.transactionHash, p.status]),
    [[TRX_TX, 'confirmed']],
  );

  const again = await w.railRecovery.recover(w.request(TRX_TX.slice(2)));
  t.is(again.outcome, 'complete');
  t.is(w.session().payments.length, 1, 'the same transfer id: recorded once');
  t.is(transferId(w.published.at(-2) as ChainTransferMessage), transferId(transfers[0]!));
});

test('a malformed Tron id is a 400 naming the field; an unknown one is a 404 as on EVM', async (t) => {
  const w = await world(t);
  for (const bad of ['0x1234', `0x${'ab'.repeat(33)}`, `${'zz'.repeat(32)}`, `TX${'1'.repeat(62)}`]) {
    const error = await t.throwsAsync(w.railRecovery.recover(w.request(bad)), { instanceOf: WeirError });
    t.is(error?.statusCode, 400, bad);
    t.is(error?.code, 'parameter_invalid');
    t.regex(
      error?.message ?? '',
      /^transactionHash: must be a Tron transaction id on tron-local: 64 hex digits, with or without 0x/,
    );
  }
  t.deepEqual(w.node.asked, [], 'nothing malformed reaches the node');
  const missing = await t.throwsAsync(w.railRecovery.recover(w.request('12'.repeat(32))), { instanceOf: WeirError });
  t.is(missing?.statusCode, 404);
  t.is(missing?.code, 'transaction_not_found');
  t.regex(missing?.message ?? '', /not found/);
  t.is(w.published.length, 0);
});

test('what the session does not take is a wrong token, named in T… form; a transaction paying no deposit address is a wrong claim', async (t) => {
  const w = await world(t);
  const usdc = await w.railRecovery.recover(w.request(USDC_TX));
  t.is(usdc.outcome, 'wrong_token_or_network');
  t.regex(usdc.message, /the transaction sent USDC on tron-local, which checkout session \S+ does not accept there/);
  const unlisted = await w.railRecovery.recover(w.request(UNLISTED_TX));
  t.is(unlisted.outcome, 'wrong_token_or_network');
  t.true(
    unlisted.message.includes(`token ${evmToTron(UNLISTED_HEX)}, which Weir does not take on tron-local`),
    unlisted.message,
  );
  const elsewhere = await w.railRecovery.recover(w.request(ELSEWHERE_TX));
  t.is(elsewhere.outcome, 'wrong_claim');
  t.regex(elsewhere.message, /pays no checkout session of this organization/);
  t.deepEqual(w.published, [], 'nothing is credited');
});

test('a TRC-10 transfer to a deposit address (its amount shown as value) is no TRX payment: a wrong token, nothing credited', async (t) => {
  const w = await world(t);
  w.node.setHead(BLOCK + 5);
  const recovered = await w.railRecovery.recover(w.request(TRC10_TX));
  t.is(recovered.outcome, 'wrong_token_or_network', recovered.message);
  t.regex(recovered.message, /the transaction sent a TRC-10 token \(a TransferAssetContract, not TRX\)/);
  t.deepEqual(w.published, [], 'nothing is credited');
  t.deepEqual(w.session().payments, []);
});
