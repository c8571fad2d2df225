import { createPublicClient, erc20Abi, http, type Hex } from 'viem';
import type { Clock } from '../../shared/clock.ts';
import {
  SweepNodeError,
  SweepReceiptLostError,
  SweepRejectedError,
  SweepRevertedError,
  SweepWaitingError,
  type SweepTransaction,
} from '../../sweeper/sweep-errors.ts';
import type { SweepExecutor, SweepRequest } from '../../sweeper/sweeper.ts';
import { flushCallData } from '../evm/contracts/flush-forwarders.ts';
import { NATIVE_ASSET_ADDRESS } from '../network-definition.ts';
import { tronToEvm, tronToHex } from './address.ts';
import { tronPayerSigner, type SignedTronTransaction } from './payer-signer.ts';
import { decodeTronTriggerRaw, TRIGGER_SMART_CONTRACT, type TronTriggerRaw } from './tron-raw-transaction.ts';
import { tronHttpApiBase, type TronResourceNode } from './tron-resource-node.ts';
import { tronFlushRequests } from './tron-resource-sweeps.ts';

/*
 * Sweeps on a real Tron node (java-tron's JSON-RPC takes no transactions): the flush is built by
 * the node's HTTP API (`wallet/triggersmartcontract`), signed here over its txID, and broadcast
 * (`wallet/broadcasttransaction`); its outcome is `wallet/gettransactioninfobyid`, whose `fee` (sun)
 * is what the sweep cost. A Tron transaction carries an expiration (about 60 s after it was
 * built), so a signed flush not taken by then can never be mined: it is 'absent'.
 */

/** The flush's signature as the factory's ABI writes it (the node hashes it to the 4-byte selector). */
export const FLUSH_FUNCTION_SELECTOR = 'flush((address,bytes32,address[],bool)[])';
/** Energy headroom over the estimate, in percent: the fee limit must not be what reverts a sweep. */
const FEE_LIMIT_HEADROOM_PERCENT = 150n;
/** java-tron's ceiling of a fee limit (15,000 TRX); the operator's cap is usually far lower. */
export const DEFAULT_MAX_FEE_LIMIT_SUN = 1_000_000_000n;

/** broadcasttransaction codes that say the node was not able to take it now (it may take it again): the outcome is not known. */
const BUSY_CODES = new Set(['SERVER_BUSY', 'NO_CONNECTION', 'NOT_ENOUGH_EFFECTIVE_CONNECTION']);

/** What `wallet/gettransactioninfobyid` answers for a mined transaction (java-tron leaves zero fields out). */
type TransactionInfo = {
  id?: string;
  blockNumber?: number;
  fee?: number;
  receipt?: { result?: string; energy_usage_total?: number; net_usage?: number; net_fee?: number; energy_fee?: number };
};

/** The node's HTTP API failing (unreachable, 5xx): says nothing about the transaction. */
class TronHttpFailure extends Error {
  override readonly name = 'TronHttpFailure';
}

const count = (value: unknown): bigint =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? BigInt(value) : 0n;

/** java-tron writes broadcast messages in hex of UTF-8; some proxies in plain text. */
export function tronMessageText(message: unknown): string {
  if (typeof message !== 'string') return '';
  if (/^(?:[0-9a-fA-F]{2})+$/.test(message)) return Buffer.from(message, 'hex').toString('utf8');
  return message;
}

/** A mined transaction's info as the sweeper's port names it: energy as gas, the node's exact fee as its cost. */
export function sweepOfInfo(txID: string, info: TransactionInfo): { transaction: SweepTransaction; reverted: boolean } {
  const receipt = info.receipt ?? {};
  const energyUsed = count(receipt.energy_usage_total);
  const fee = count(info.fee);
  return {
    transaction: {
      transactionHash: `0x${txID.toLowerCase()}`,
      ...(typeof info.blockNumber === 'number' ? { blockNumber: BigInt(info.blockNumber) } : {}),
      gasUsed: energyUsed,
      gasCost: fee,
      // The node's own figures; the resource wrapper keeps them over its estimate (exact: true).
      tron: { energyUsed, bandwidthUsed: count(receipt.net_usage), trxBurnt: fee, energySource: 'burn' },
    },
    reverted: receipt.result !== undefined && receipt.result !== 'SUCCESS',
  };
}

/** The signed form `beforeSend` got (the transaction JSON), or null when it is not one. */
function readSigned(text: string): SignedTronTransaction | null {
  try {
    const parsed = JSON.parse(text) as Partial<SignedTronTransaction>;
    if (typeof parsed.txID !== 'string' || typeof parsed.raw_data_hex !== 'string') return null;
    decodeTronTriggerRaw(parsed.raw_data_hex);
    return parsed as SignedTronTransaction;
  } catch {
    return null;
  }
}

/**
 * Why the transaction a node built (its protobuf `raw_data_hex`, what the txID hashes) is not the
 * flush asked for, or null when it is: one TriggerSmartContract from the sweeper to the factory,
 * no TRX with it, the call data and fee limit asked for.
 */
export function builtProblem(
  rawDataHex: string,
  expected: { owner: string; factory: string; data: string; feeLimit: bigint },
): string | null {
  let raw: TronTriggerRaw;
  try {
    raw = decodeTronTriggerRaw(rawDataHex);
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  const [call, ...more] = raw.contracts;
  if (call === undefined || more.length > 0) return `${raw.contracts.length} contracts`;
  if (call.type !== TRIGGER_SMART_CONTRACT) return `contract type ${call.type}`;
  if (call.owner.toLowerCase() !== expected.owner.toLowerCase()) return `owner ${call.owner}`;
  if (call.contract.toLowerCase() !== expected.factory.toLowerCase()) return `contract ${call.contract}`;
  if (call.callValue !== 0n) return `call value ${call.callValue}`;
  if (call.data.toLowerCase() !== expected.data.toLowerCase()) return 'other call data';
  if (raw.feeLimit !== expected.feeLimit) return `fee limit ${raw.feeLimit}`;
  return null;
}

/**
 * A Tron network's sweeps through java-tron's HTTP API (beside `jsonRpcUrl`'s `/jsonrpc`), T…
 * addresses in. The fee limit is the energy the node estimates at its price, with headroom,
 * capped at `maxFeeLimitSun`; without an estimate, the cap.
 */
export function createTronNativeSweepExecutor(deps: {
  jsonRpcUrl: string;
  /** The sweeper's key (32 bytes hex): it signs, and owns the flush. */
  key: Hex;
  /** The ForwarderFactory, T… form. */
  factory: string;
  node: TronResourceNode;
  clock: Clock;
  maxFeeLimitSun?: bigint;
  /** How long a flush waits for its info before its receipt is taken as lost; 90 s unless given. */
  receiptTimeoutMs?: number;
  receiptPollMs?: number;
  fetchImpl?: typeof fetch;
}): SweepExecutor {
  const base = tronHttpApiBase(deps.jsonRpcUrl);
  const fetchImpl = deps.fetchImpl ?? fetch;
  const signer = tronPayerSigner(deps.key);
  const owner = tronToHex(signer.address).slice(2);
  const factory = tronToHex(deps.factory).slice(2);
  const maxFeeLimit = deps.maxFeeLimitSun ?? DEFAULT_MAX_FEE_LIMIT_SUN;
  const receiptTimeoutMs = deps.receiptTimeoutMs ?? 90_000;
  const receiptPollMs = deps.receiptPollMs ?? 1_000;
  const client = createPublicClient({ transport: http(deps.jsonRpcUrl, { retryCount: 1 }) });

  async function wallet(path: string, body: unknown): Promise<Record<string, unknown>> {
    let response: Response;
    try {
      response = await fetchImpl(`${base}/wallet/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    } catch (error) {
      throw new TronHttpFailure(`wallet/${path}: ${error instanceof Error ? error.message : String(error)}`, {
        cause: error,
      });
    }
    if (!response.ok) throw new TronHttpFailure(`wallet/${path} answered HTTP ${response.status}`);
    let answer: unknown;
    try {
      answer = await response.json();
    } catch (error) {
      throw new TronHttpFailure(`wallet/${path} answered no JSON`, { cause: error });
    }
    if (typeof answer !== 'object' || answer === null || Array.isArray(answer))
      throw new TronHttpFailure(`wallet/${path} answered no object`);
    return answer as Record<string, unknown>;
  }

  const nodeError = (error: unknown, doing: string) =>
    new SweepNodeError(`${doing}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });

  async function feeLimit(data: Hex): Promise<bigint> {
    const [energy, prices] = await Promise.all([
      deps.node.estimateEnergy({ from: tronToEvm(signer.address), to: tronToEvm(deps.factory), data }),
      deps.node.prices(),
    ]);
    if (energy === null) return maxFeeLimit;
    const limit = (energy * prices.energySun * FEE_LIMIT_HEADROOM_PERCENT) / 100n;
    return limit < maxFeeLimit ? limit : maxFeeLimit;
  }

  /** Broadcasts `signed`: taken (or the node already has it), refused (with why), or busy; throws TronHttpFailure. */
  async function broadcast(
    signed: SignedTronTransaction,
  ): Promise<{ outcome: 'taken' } | { outcome: 'refused' | 'busy'; why: string }> {
    const answer = await wallet('broadcasttransaction', signed);
    if (answer['result'] === true) return { outcome: 'taken' };
    const code = typeof answer['code'] === 'string' ? answer['code'] : 'OTHER_ERROR';
    const why = `${code} ${tronMessageText(answer['message'])}`.trim();
    // The node has it already (a rebroadcast, or one lost on the way back): it is in flight.
    if (code === 'DUP_TRANSACTION_ERROR') return { outcome: 'taken' };
    return { outcome: BUSY_CODES.has(code) ? 'busy' : 'refused', why };
  }

  async function info(txID: string): Promise<TransactionInfo | null> {
    const answer = await wallet('gettransactioninfobyid', { value: txID });
    return typeof answer['id'] === 'string' || answer['blockNumber'] !== undefined ? (answer as TransactionInfo) : null;
  }

  const later = (ms: number) =>
    new Promise<void>((resolve) => {
      deps.clock.schedule(deps.clock.now() + ms, resolve);
    });

  /** Polls the transaction's info until it is mined or `receiptTimeoutMs` passed (then null). */
  async function awaitInfo(txID: string): Promise<TransactionInfo | null> {
    const deadline = deps.clock.now() + receiptTimeoutMs;
    for (;;) {
      try {
        const found = await info(txID);
        if (found !== null) return found;
      } catch {
        // The node not answering a poll says nothing yet; the deadline decides.
      }
      if (deps.clock.now() >= deadline) return null;
      await later(receiptPollMs);
    }
  }

  async function holdsFunds(request: SweepRequest): Promise<boolean> {
    const address = tronToEvm(request.depositAddress);
    // java-tron answers state reads at `latest` only.
    const balances = await Promise.all(
      request.assets.map((asset) =>
        asset === NATIVE_ASSET_ADDRESS
          ? client.getBalance({ address, blockTag: 'latest' })
          : client.readContract({
              address: tronToEvm(asset),
              abi: erc20Abi,
              functionName: 'balanceOf',
              args: [address],
              blockTag: 'latest',
            }),
      ),
    );
    return balances.some((b) => b > 0n);
  }

  return {
    async funded(requests) {
      try {
        return await Promise.all(requests.map(holdsFunds));
      } catch (error) {
        throw nodeError(error, 'reading deposit balances');
      }
    },
    async flush(requests, beforeSend) {
      if (requests.length === 0) throw new Error('a Tron flush takes at least one deposit');
      const data = flushCallData(tronFlushRequests(requests));
      let built: Record<string, unknown>;
      let limit: bigint;
      try {
        limit = await feeLimit(data);
        built = await wallet('triggersmartcontract', {
          owner_address: owner,
          contract_address: factory,
          function_selector: FLUSH_FUNCTION_SELECTOR,
          parameter: data.slice(10),
          fee_limit: Number(limit),
          call_value: 0,
          visible: false,
        });
      } catch (error) {
        throw nodeError(error, 'building a sweep (wallet/triggersmartcontract)');
      }
      const result = built['result'] as { result?: unknown; code?: unknown; message?: unknown } | undefined;
      const transaction = built['transaction'] as SignedTronTransaction | undefined;
      if (result?.result !== true || transaction === undefined)
        // The node would not build it (a validation failure): nothing was signed, and the deposits are to look at.
        throw new Error(
          `the node refused to build the sweep: ${String(result?.code ?? 'no transaction')} ${tronMessageText(result?.message)}`.trim(),
        );
      const { signature: _unsigned, ...unsigned } = transaction;
      const problem = builtProblem(unsigned.raw_data_hex, { owner, factory, data: data.slice(2), feeLimit: limit });
      if (problem !== null)
        // The node's error, not the deposits': what it built is not the flush asked for, so it is not signed.
        throw new SweepNodeError(`the node built a sweep that is not the one asked for (${problem}): not signed`);
      let signed: SignedTronTransaction;
      try {
        signed = signer.signTransaction(unsigned);
      } catch (error) {
        throw nodeError(error, 'the node built a sweep that cannot be signed');
      }
      const txID = signed.txID.toLowerCase();
      // Recorded as Weir records Tron transaction ids (0x + lowercase, as the eth_ JSON-RPC writes them); the node's /wallet/ calls take them bare.
      const hash = `0x${txID}`;
      await beforeSend({ transactionHash: hash, signedTransaction: JSON.stringify(signed) });
      let sent: Awaited<ReturnType<typeof broadcast>>;
      try {
        sent = await broadcast(signed);
      } catch (error) {
        throw new SweepReceiptLostError(`broadcasting sweep ${txID}: no answer`, hash, { cause: error });
      }
      if (sent.outcome === 'refused') throw new SweepRejectedError(`the node refused sweep ${txID}: ${sent.why}`, hash);
      // Not taken for now, never sent: it may yet be, sent again until it expires (see rebroadcast).
      if (sent.outcome === 'busy')
        throw new SweepWaitingError(`the node did not take sweep ${txID} now: ${sent.why}`, hash);
      const mined = await awaitInfo(txID);
      if (mined === null)
        throw new SweepReceiptLostError(`sweep ${txID} was broadcast; its outcome is not known yet`, hash);
      const swept = sweepOfInfo(txID, mined);
      if (swept.reverted)
        throw new SweepRevertedError(
          `sweep ${txID} was mined and reverted (${mined.receipt?.result ?? 'no result'})`,
          swept.transaction,
        );
      return swept.transaction;
    },
    async minedSweep(transactionHash) {
      const txID = transactionHash.replace(/^0x/, '').toLowerCase();
      try {
        const found = await info(txID);
        return found === null ? null : sweepOfInfo(txID, found);
      } catch (error) {
        throw nodeError(error, `looking up sweep ${txID}`);
      }
    },
    async rebroadcast(transactionHash, signedTransaction) {
      const txID = transactionHash.replace(/^0x/, '').toLowerCase();
      try {
        const known = await wallet('gettransactionbyid', { value: txID });
        if (typeof known['txID'] === 'string') return 'pending';
        if (signedTransaction === null) return 'absent';
        const signed = readSigned(signedTransaction);
        // Not a Tron transaction this executor signed (another sender's form): it cannot send it, so it is absent.
        if (signed === null) return 'absent';
        // Expired (by the signed bytes): no node will ever take it, so it can never be mined.
        if (decodeTronTriggerRaw(signed.raw_data_hex).expiration <= BigInt(deps.clock.now())) return 'absent';
        const sent = await broadcast(signed);
        if (sent.outcome === 'taken') return 'resent';
        // Not taken for now, as on the first send: it may yet be, sent again until it expires.
        if (sent.outcome === 'busy') return 'waiting';
        return 'absent';
      } catch (error) {
        throw nodeError(error, `resending sweep ${txID}`);
      }
    },
  };
}
