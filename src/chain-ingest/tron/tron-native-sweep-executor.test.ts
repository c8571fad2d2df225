import test from 'ava';
import { createHash } from 'node:crypto';
import { recoverAddress, toFunctionSelector } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createManualClock } from '../../shared/clock.ts';
import {
  SweepNodeError,
  SweepReceiptLostError,
  SweepRejectedError,
  SweepRevertedError,
  SweepWaitingError,
} from '../../sweeper/sweep-errors.ts';
import type { SignedSweep } from '../../sweeper/sweeper.ts';
import { flushCallData } from '../evm/contracts/flush-forwarders.ts';
import { evmToTron, tronToEvm } from './address.ts';
import { createTronNativeSweepExecutor, FLUSH_FUNCTION_SELECTOR } from './tron-native-sweep-executor.ts';
import type { TronResourceNode } from './tron-resource-node.ts';
import { withTronResources } from './tron-resource-sweeps.ts';
import { encodeTronTriggerRaw, TRIGGER_SMART_CONTRACT, type TronTriggerRaw } from './tron-raw-transaction.ts';
import { parseTronMaxFeeLimitEnv, TronConfigError } from './tron-setup.ts';
import { fixtureFactory, fixtureSweepRequest, fixtureUsdt } from './tron-sweep.fixture.ts';

const KEY = '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6' as const;
const sweeper = evmToTron(privateKeyToAccount(KEY).address);
const factory = fixtureFactory;
const usdt = fixtureUsdt;
const request = fixtureSweepRequest;
const START = Date.parse('2026-01-01T00:00:00Z');

const resourceNode: TronResourceNode = {
  accountResources: async () => ({ energy: 0n, stakedBandwidth: 0n, freeBandwidth: 0n }),
  prices: async () => ({ energySun: 210n, bandwidthSun: 1000n }),
  estimateEnergy: async () => 100_000n,
  shapes: async () => [],
  callDataBytes: async () => null,
};

type Answer = Record<string, unknown> | 'unreachable' | 'http500';

/** A java-tron HTTP API double: each path answers what its handler returns; calls are kept. */
function fakeNode(handlers: Record<string, (body: Record<string, unknown>) => Answer>) {
  const calls: { path: string; body: Record<string, unknown> }[] = [];
  const fetchImpl = (async (url: string | URL | Request, init?: RequestInit) => {
    const path = new URL(String(url)).pathname.replace('/wallet/', '');
    const body = JSON.parse(String(init?.body)) as Record<string, unknown>;
    calls.push({ path, body });
    const handler = handlers[path];
    const answer = handler ? handler(body) : { Error: 'not served' };
    if (answer === 'unreachable')
      throw Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } });
    if (answer === 'http500') return new Response('busy', { status: 500 });
    return Response.json(answer);
  }) as typeof fetch;
  return { fetchImpl, calls };
}

/** What triggersmartcontract answers: the call asked for (or `tamper`ed), protobuf raw_data_hex, txID = its sha256, expiring 60 s after `now`. */
function built(body: Record<string, unknown>, now: number, tamper: Partial<TronTriggerRaw['contracts'][number]> = {}) {
  const call = {
    type: TRIGGER_SMART_CONTRACT,
    owner: String(body['owner_address']),
    contract: String(body['contract_address']),
    callValue: 0n,
    data: `${toFunctionSelector(String(body['function_selector'])).slice(2)}${String(body['parameter'])}`,
    ...tamper,
  };
  const raw: TronTriggerRaw = {
    refBlockBytes: '1234',
    refBlockHash: '0102030405060708',
    expiration: BigInt(now + 60_000),
    timestamp: BigInt(now),
    feeLimit: BigInt(Number(body['fee_limit'])),
    contracts: [call],
  };
  const raw_data_hex = encodeTronTriggerRaw(raw);
  const txID = createHash('sha256').update(Buffer.from(raw_data_hex, 'hex')).digest('hex');
  const raw_data = { contract: [{ parameter: { value: body } }], expiration: now + 60_000 };
  return { result: { result: true }, transaction: { visible: false, txID, raw_data, raw_data_hex } };
}

const minedInfo = (result: string) => ({
  id: 'x',
  blockNumber: 12,
  fee: 13_650_000,
  receipt: { result, energy_usage_total: 65_000, energy_fee: 13_650_000, net_usage: 345 },
});

function executorOver(handlers: Record<string, (body: Record<string, unknown>) => Answer>, receiptTimeoutMs = 0) {
  const clock = createManualClock(START);
  const node = fakeNode({ triggersmartcontract: (body) => built(body, clock.now()), ...handlers });
  const executor = createTronNativeSweepExecutor({
    jsonRpcUrl: 'http://node.test/jsonrpc',
    key: KEY,
    factory,
    node: resourceNode,
    clock,
    maxFeeLimitSun: 50_000_000n,
    receiptTimeoutMs,
    fetchImpl: node.fetchImpl,
  });
  const signed: SignedSweep[] = [];
  const beforeSend = async (s: SignedSweep) => {
    signed.push(s);
  };
  return { executor, calls: node.calls, clock, signed, beforeSend };
}

test('a flush is built by triggersmartcontract, signed over its txID, broadcast and found mined with the node’s fee', async (t) => {
  const { executor, calls, signed, beforeSend } = executorOver({
    broadcasttransaction: () => ({ result: true }),
    gettransactioninfobyid: () => minedInfo('SUCCESS'),
  });
  const result = await executor.flush([request], beforeSend);
  const trigger = calls[0]!;
  t.is(trigger.path, 'triggersmartcontract');
  t.is(trigger.body['owner_address'], `41${tronToEvm(sweeper).slice(2).toLowerCase()}`);
  t.is(trigger.body['contract_address'], `41${tronToEvm(factory).slice(2).toLowerCase()}`);
  t.is(trigger.body['visible'], false);
  t.is(trigger.body['call_value'], 0);
  // 100k energy at 210 sun with 50 % headroom, under the cap.
  t.is(trigger.body['fee_limit'], 31_500_000);
  const data = flushCallData([
    {
      merchantAddress: tronToEvm(request.merchantAddress),
      sessionId: request.checkoutSessionId,
      tokens: [tronToEvm(usdt)],
      native: false,
    },
  ]);
  t.is(`${toFunctionSelector(FLUSH_FUNCTION_SELECTOR)}${String(trigger.body['parameter'])}`, data);
  // The signed form is the transaction JSON the node takes; its signature recovers the sweeper.
  t.is(signed.length, 1);
  const tx = JSON.parse(signed[0]!.signedTransaction) as { txID: string; signature: string[] };
  t.is(signed[0]!.transactionHash, `0x${tx.txID}`);
  const signer = await recoverAddress({ hash: `0x${tx.txID}`, signature: `0x${tx.signature[0]}` });
  t.is(signer, privateKeyToAccount(KEY).address);
  t.deepEqual(calls[1]!.body, JSON.parse(signed[0]!.signedTransaction));
  t.is(result.transactionHash, `0x${tx.txID}`);
  t.is(result.blockNumber, 12n);
  t.is(result.gasUsed, 65_000n);
  t.is(result.gasCost, 13_650_000n);
  t.is(result.tron?.trxBurnt, 13_650_000n);
});

test('the fee limit is capped by the operator', async (t) => {
  const node = fakeNode({
    triggersmartcontract: (body) => built(body, START),
    broadcasttransaction: () => ({ result: true }),
    gettransactioninfobyid: () => minedInfo('SUCCESS'),
  });
  const capped = createTronNativeSweepExecutor({
    jsonRpcUrl: 'http://node.test/jsonrpc',
    key: KEY,
    factory,
    node: { ...resourceNode, estimateEnergy: async () => 10_000_000n },
    clock: createManualClock(START),
    maxFeeLimitSun: 50_000_000n,
    receiptTimeoutMs: 0,
    fetchImpl: node.fetchImpl,
  });
  await capped.flush([request], async () => {});
  t.is(node.calls[0]!.body['fee_limit'], 50_000_000);
});

test('a broadcast the node refuses is SweepRejectedError with the txID and its decoded message', async (t) => {
  const { executor, signed, beforeSend } = executorOver({
    broadcasttransaction: () => ({
      result: false,
      code: 'CONTRACT_VALIDATE_ERROR',
      message: Buffer.from('Validate TriggerSmartContract error, balance is not sufficient').toString('hex'),
    }),
  });
  const error = await t.throwsAsync(executor.flush([request], beforeSend), { instanceOf: SweepRejectedError });
  t.is(error.transactionHash, signed[0]!.transactionHash);
  t.regex(error.message, /balance is not sufficient/);
});

test('a duplicate broadcast is the node having it: the flush waits for it and succeeds', async (t) => {
  const { executor, beforeSend } = executorOver({
    broadcasttransaction: () => ({ result: false, code: 'DUP_TRANSACTION_ERROR', message: '647570' }),
    gettransactioninfobyid: () => minedInfo('SUCCESS'),
  });
  const result = await executor.flush([request], beforeSend);
  t.is(result.gasCost, 13_650_000n);
});

test('a mined revert is SweepRevertedError carrying the node’s fee', async (t) => {
  const { executor, beforeSend } = executorOver({
    broadcasttransaction: () => ({ result: true }),
    gettransactioninfobyid: () => minedInfo('REVERT'),
  });
  const error = await t.throwsAsync(executor.flush([request], beforeSend), { instanceOf: SweepRevertedError });
  t.is(error.transaction.gasCost, 13_650_000n);
  t.is(error.transaction.gasUsed, 65_000n);
});

test('no answer to the broadcast, or no info before the deadline, is SweepReceiptLostError with the txID', async (t) => {
  const lostSend = executorOver({ broadcasttransaction: () => 'unreachable' });
  const sendError = await t.throwsAsync(lostSend.executor.flush([request], lostSend.beforeSend), {
    instanceOf: SweepReceiptLostError,
  });
  t.is(sendError.transactionHash, lostSend.signed[0]!.transactionHash);

  const lostInfo = executorOver({ broadcasttransaction: () => ({ result: true }), gettransactioninfobyid: () => ({}) });
  const infoError = await t.throwsAsync(lostInfo.executor.flush([request], lostInfo.beforeSend), {
    instanceOf: SweepReceiptLostError,
  });
  t.is(infoError.transactionHash, lostInfo.signed[0]!.transactionHash);
});

test('a broadcast the node did not take now (SERVER_BUSY) is SweepWaitingError with the txID, not a lost receipt: never sent, it may yet be, sent again until it expires', async (t) => {
  const busy = executorOver({
    broadcasttransaction: () => ({ result: false, code: 'SERVER_BUSY', message: Buffer.from('busy').toString('hex') }),
  });
  const error = await t.throwsAsync(busy.executor.flush([request], busy.beforeSend), {
    instanceOf: SweepWaitingError,
  });
  t.is(error.transactionHash, busy.signed[0]!.transactionHash);
  t.regex(error.message, /did not take sweep [0-9a-f]+ now: SERVER_BUSY busy/);
});

test('the info is polled on the injected clock until it comes', async (t) => {
  let polls = 0;
  const { executor, clock, beforeSend } = executorOver(
    {
      broadcasttransaction: () => ({ result: true }),
      gettransactioninfobyid: () => (++polls < 3 ? {} : minedInfo('SUCCESS')),
    },
    60_000,
  );
  const flushing = executor.flush([request], beforeSend);
  for (let i = 0; i < 20 && polls < 3; i += 1) {
    await new Promise((resolve) => setImmediate(resolve));
    clock.advanceBy(1_000);
  }
  t.is((await flushing).gasCost, 13_650_000n);
  t.is(polls, 3);
});

test('a node that cannot build the flush is SweepNodeError, and nothing is signed', async (t) => {
  const { executor, signed, beforeSend } = executorOver({ triggersmartcontract: () => 'http500' });
  await t.throwsAsync(executor.flush([request], beforeSend), { instanceOf: SweepNodeError });
  t.is(signed.length, 0);
});

test('a failing beforeSend is thrown as it came, and nothing is broadcast', async (t) => {
  const { executor, calls } = executorOver({});
  const failure = new Error('the log is down');
  const error = await t.throwsAsync(
    executor.flush([request], async () => {
      throw failure;
    }),
  );
  t.is(error, failure);
  t.false(calls.some((c) => c.path === 'broadcasttransaction'));
});

test('minedSweep: null while the node answers {}, else the node’s figures; a node failure is SweepNodeError', async (t) => {
  let answer: Answer = {};
  const { executor } = executorOver({ gettransactioninfobyid: () => answer });
  t.is(await executor.minedSweep('ab'.repeat(32), null), null);
  answer = minedInfo('OUT_OF_ENERGY');
  const mined = await executor.minedSweep('ab'.repeat(32), null);
  t.true(mined?.reverted);
  t.is(mined?.transaction.gasCost, 13_650_000n);
  answer = 'unreachable';
  await t.throwsAsync(executor.minedSweep('ab'.repeat(32), null), { instanceOf: SweepNodeError });
});

test('rebroadcast: pending when the node has it, resent when it takes it again, absent once expired or refused', async (t) => {
  let known: Answer = {};
  let broadcast: Answer = { result: true };
  const { executor, clock, signed, beforeSend, calls } = executorOver({
    broadcasttransaction: () => broadcast,
    gettransactioninfobyid: () => ({}),
    gettransactionbyid: () => known,
  });
  await t.throwsAsync(executor.flush([request], beforeSend), { instanceOf: SweepReceiptLostError });
  const { transactionHash, signedTransaction } = signed[0]!;
  t.is(await executor.rebroadcast(transactionHash, null), 'absent');
  t.is(await executor.rebroadcast(transactionHash, signedTransaction), 'resent');
  // The very same transaction is handed over again.
  t.deepEqual(calls.at(-1)!.body, JSON.parse(signedTransaction));
  broadcast = { result: false, code: 'DUP_TRANSACTION_ERROR', message: '' };
  t.is(await executor.rebroadcast(transactionHash, signedTransaction), 'resent');
  broadcast = { result: false, code: 'TAPOS_ERROR', message: '' };
  t.is(await executor.rebroadcast(transactionHash, signedTransaction), 'absent');
  broadcast = 'unreachable';
  await t.throwsAsync(executor.rebroadcast(transactionHash, signedTransaction), { instanceOf: SweepNodeError });
  // Expired: never handed to the node again.
  const before = calls.length;
  clock.advanceBy(61_000);
  t.is(await executor.rebroadcast(transactionHash, signedTransaction), 'absent');
  t.false(calls.slice(before).some((c) => c.path === 'broadcasttransaction'));
  // A signed form that is no Tron transaction (an EVM one, from the other sender): it cannot be sent.
  t.is(await executor.rebroadcast(transactionHash, '0x02f86b0180'), 'absent');
  known = { txID: transactionHash.slice(2), raw_data: {} };
  t.is(await executor.rebroadcast(transactionHash, signedTransaction), 'pending');
});

test('rebroadcast: a node too busy to take it again (SERVER_BUSY, NO_CONNECTION) is waiting, as on the first send, not a node failure', async (t) => {
  let broadcast: Answer = { result: true };
  const { executor, signed, beforeSend } = executorOver({
    broadcasttransaction: () => broadcast,
    gettransactioninfobyid: () => ({}),
    gettransactionbyid: () => ({}),
  });
  await t.throwsAsync(executor.flush([request], beforeSend), { instanceOf: SweepReceiptLostError });
  const { transactionHash, signedTransaction } = signed[0]!;
  for (const code of ['SERVER_BUSY', 'NO_CONNECTION', 'NOT_ENOUGH_EFFECTIVE_CONNECTION']) {
    broadcast = { result: false, code, message: Buffer.from('busy').toString('hex') };
    t.is(await executor.rebroadcast(transactionHash, signedTransaction), 'waiting', code);
  }
});

test('wrapped in the resource accounting, the node’s exact fee is the TRX burnt, not the estimate', async (t) => {
  const { executor, beforeSend } = executorOver({
    broadcasttransaction: () => ({ result: true }),
    gettransactioninfobyid: () => minedInfo('SUCCESS'),
  });
  const wrapped = withTronResources(executor, {
    network: 'tron-nile',
    sweeper,
    factory,
    node: {
      ...resourceNode,
      accountResources: async () => ({ energy: 1_000_000n, stakedBandwidth: 0n, freeBandwidth: 0n }),
    },
    policy: { source: 'staked', whenShort: 'burn' },
    rental: null,
    log: () => {},
  });
  // Its own estimate would burn nothing (1M energy held); the node says 13.65 TRX was burnt.
  const result = await wrapped.flush([request], beforeSend);
  t.is(result.gasCost, 13_650_000n);
  t.is(result.tron?.trxBurnt, 13_650_000n);
  t.is(result.tron?.energyUsed, 65_000n);
  t.is(result.tron?.energySource, 'staked');
  // Found mined later (a restart): the same exact figures.
  const mined = await wrapped.minedSweep(result.transactionHash, null);
  t.is(mined?.transaction.gasCost, 13_650_000n);
});

test('WEIR_TRON_MAX_FEE_LIMIT_SUN: a positive whole number of sun, or unset', (t) => {
  t.is(parseTronMaxFeeLimitEnv({}), null);
  t.is(parseTronMaxFeeLimitEnv({ WEIR_TRON_MAX_FEE_LIMIT_SUN: '150000000' }), 150_000_000n);
  for (const bad of ['0', '-1', '1.5', '100 TRX'])
    t.throws(() => parseTronMaxFeeLimitEnv({ WEIR_TRON_MAX_FEE_LIMIT_SUN: bad }), { instanceOf: TronConfigError });
});

test('a transaction the node built other than the flush asked for is not signed: SweepNodeError', async (t) => {
  const attacker = `41${'66'.repeat(20)}`;
  for (const tamper of [{ contract: attacker }, { callValue: 1n }, { data: 'a9059cbb00' }, { owner: attacker }]) {
    const { executor, signed, beforeSend, calls } = executorOver({
      triggersmartcontract: (body) => built(body, START, tamper),
    });
    await t.throwsAsync(executor.flush([request], beforeSend), {
      instanceOf: SweepNodeError,
      message: /not the one asked for/,
    });
    t.is(signed.length, 0);
    t.false(calls.some((c) => c.path === 'broadcasttransaction'));
  }
});
