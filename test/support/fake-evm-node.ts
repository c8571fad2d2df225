import {
  custom,
  decodeFunctionData,
  encodeAbiParameters,
  getAddress,
  keccak256,
  numberToHex,
  parseTransaction,
  recoverTransactionAddress,
  RpcRequestError,
  TimeoutError,
  toHex,
  type Address,
  type CustomTransport,
  type Hash,
  type Hex,
  type TransactionSerialized,
} from 'viem';
import { forwarderFactoryAbi } from '../../src/chain-ingest/evm/contracts/abis.ts';
import { deriveDepositAddress } from '../../src/chain-ingest/evm/contracts/deposit-address.ts';

/**
 * How the fake node answers one eth_sendRawTransaction, instead of as geth would: with a JSON-RPC
 * error, or no answer (a timeout); `take` when the node has taken the transaction all the same (an
 * earlier attempt reached it, or this one did and its answer was lost).
 */
export type SendAnswer =
  | { kind: 'error'; code: number; message: string; take: boolean }
  | { kind: 'noAnswer'; take: boolean };

/** A transaction the node holds: ours (signed, `raw`) or another of the account's, sent elsewhere. */
type NodeTransaction = { hash: Hash; from: Address; nonce: number; to: Address | null; input: Hex; raw: Hex | null };

const url = 'fake://evm-node';
const gasUsed = 100_000n;
const gasPrice = 2_000_000_000n;
const funded = 5_000_000n;

/**
 * An EVM node as a viem transport, at the JSON-RPC boundary: a pool of pending transactions and
 * the ones mined, per-account nonces, and the forwarders' token balances (every deposit address
 * holds `funded` units of any token until a flush through `factory` mined empties it). Sends are
 * answered as geth answers them ("already known", "nonce too low", "replacement transaction
 * underpriced") unless {@link answerNextSends} says otherwise. Mines each transaction at once
 * while `automine`; `showsByHash` false makes eth_getTransactionByHash answer null, as some
 * providers do for pending transactions.
 */
export function createFakeEvmNode(options: { chainId: number; factory: Address }) {
  const settings = { automine: true, showsByHash: true };
  const minedNonces = new Map<Address, number>();
  const pool = new Map<Hash, NodeTransaction>();
  const mined = new Map<Hash, NodeTransaction & { blockNumber: number }>();
  const emptied = new Set<Address>();
  const sends: Hex[] = [];
  const scripted: SendAnswer[] = [];
  let beforeNextSend: (() => void) | null = null;
  let blockNumber = 1;

  const minedNonceOf = (from: Address) => minedNonces.get(from) ?? 0;
  const pendingNonceOf = (from: Address) => {
    let nonce = minedNonceOf(from);
    while ([...pool.values()].some((tx) => tx.from === from && tx.nonce === nonce)) nonce += 1;
    return nonce;
  };
  const rpcError = (body: { method: string; params: unknown }, code: number, message: string) =>
    new RpcRequestError({ body, error: { code, message }, url });

  function mine(): void {
    blockNumber += 1;
    for (let progressed = true; progressed; ) {
      progressed = false;
      for (const tx of pool.values()) {
        if (tx.nonce !== minedNonceOf(tx.from)) continue;
        pool.delete(tx.hash);
        mined.set(tx.hash, { ...tx, blockNumber });
        minedNonces.set(tx.from, tx.nonce + 1);
        if (tx.to !== null && getAddress(tx.to) === getAddress(options.factory)) emptyFlushed(tx.input);
        progressed = true;
      }
    }
  }

  function emptyFlushed(input: Hex): void {
    const { args } = decodeFunctionData({ abi: forwarderFactoryAbi, data: input });
    for (const request of args[0] as readonly { merchant: Address; sessionSalt: Hex }[])
      emptied.add(
        deriveDepositAddress({
          factoryAddress: options.factory,
          merchantAddress: request.merchant,
          sessionSalt: request.sessionSalt,
        }),
      );
  }

  /** As geth: the pool's error for `tx`, or null when it takes it. */
  function poolRefusal(tx: NodeTransaction): { code: number; message: string } | null {
    if (pool.has(tx.hash) || mined.has(tx.hash)) return { code: -32000, message: 'already known' };
    const next = minedNonceOf(tx.from);
    if (tx.nonce < next)
      return { code: -32000, message: `nonce too low: address ${tx.from}, tx: ${tx.nonce} state: ${next}` };
    if ([...pool.values()].some((other) => other.from === tx.from && other.nonce === tx.nonce))
      return { code: -32000, message: 'replacement transaction underpriced' };
    return null;
  }

  function take(tx: NodeTransaction): void {
    if (poolRefusal(tx) !== null) return;
    pool.set(tx.hash, tx);
    if (settings.automine) mine();
  }

  async function sendRawTransaction(body: { method: string; params: unknown }, raw: Hex): Promise<Hash> {
    sends.push(raw);
    const hook = beforeNextSend;
    beforeNextSend = null;
    hook?.();
    const serializedTransaction = raw as TransactionSerialized;
    const parsed = parseTransaction(serializedTransaction);
    const tx: NodeTransaction = {
      hash: keccak256(raw),
      from: await recoverTransactionAddress({ serializedTransaction }),
      nonce: parsed.nonce ?? 0,
      to: parsed.to ?? null,
      input: parsed.data ?? '0x',
      raw,
    };
    const answer = scripted.shift();
    if (answer === undefined) {
      const refusal = poolRefusal(tx);
      if (refusal) throw rpcError(body, refusal.code, refusal.message);
      take(tx);
      return tx.hash;
    }
    if (answer.take) take(tx);
    if (answer.kind === 'noAnswer') throw new TimeoutError({ body, url });
    throw rpcError(body, answer.code, answer.message);
  }

  const transactionJson = (tx: NodeTransaction, at: number | null) => ({
    hash: tx.hash,
    from: tx.from,
    to: tx.to,
    nonce: numberToHex(tx.nonce),
    input: tx.input,
    value: '0x0',
    gas: numberToHex(300_000),
    gasPrice: toHex(gasPrice),
    maxFeePerGas: toHex(gasPrice),
    maxPriorityFeePerGas: toHex(gasPrice / 2n),
    type: '0x2',
    chainId: numberToHex(options.chainId),
    blockHash: at === null ? null : blockHashOf(at),
    blockNumber: at === null ? null : numberToHex(at),
    transactionIndex: at === null ? null : '0x0',
    r: '0x1',
    s: '0x1',
    v: '0x0',
    yParity: '0x0',
  });
  const blockHashOf = (n: number) => keccak256(encodeAbiParameters([{ type: 'uint256' }], [BigInt(n)]));

  function receiptOf(hash: Hash) {
    const tx = mined.get(hash);
    if (!tx) return null;
    return {
      transactionHash: tx.hash,
      transactionIndex: '0x0',
      blockHash: blockHashOf(tx.blockNumber),
      blockNumber: numberToHex(tx.blockNumber),
      from: tx.from,
      to: tx.to,
      cumulativeGasUsed: toHex(gasUsed),
      gasUsed: toHex(gasUsed),
      effectiveGasPrice: toHex(gasPrice),
      contractAddress: null,
      logs: [],
      logsBloom: `0x${'0'.repeat(512)}`,
      status: '0x1',
      type: '0x2',
    };
  }

  async function request(body: { method: string; params?: unknown }): Promise<unknown> {
    const params = (body.params ?? []) as unknown[];
    switch (body.method) {
      case 'eth_chainId':
        return numberToHex(options.chainId);
      case 'eth_blockNumber':
        return numberToHex(blockNumber);
      case 'eth_getBlockByNumber':
        return {
          number: numberToHex(blockNumber),
          hash: blockHashOf(blockNumber),
          parentHash: blockHashOf(blockNumber - 1),
          timestamp: numberToHex(1_700_000_000 + blockNumber),
          baseFeePerGas: toHex(gasPrice / 2n),
          gasLimit: toHex(30_000_000n),
          gasUsed: '0x0',
          transactions: [],
        };
      case 'eth_maxPriorityFeePerGas':
        return toHex(gasPrice / 4n);
      case 'eth_estimateGas':
        return numberToHex(200_000);
      case 'eth_getTransactionCount': {
        const from = getAddress(params[0] as string);
        return numberToHex(params[1] === 'pending' ? pendingNonceOf(from) : minedNonceOf(from));
      }
      case 'eth_getBalance':
        return '0x0';
      case 'eth_call': {
        // balanceOf(address): the selector, then the address in the last 20 bytes of the word.
        const data = (params[0] as { data?: Hex; input?: Hex }).data ?? (params[0] as { input: Hex }).input;
        const holder = getAddress(`0x${data.slice(-40)}`);
        return encodeAbiParameters([{ type: 'uint256' }], [emptied.has(holder) ? 0n : funded]);
      }
      case 'eth_sendRawTransaction':
        return sendRawTransaction({ method: body.method, params }, params[0] as Hex);
      case 'eth_getTransactionByHash': {
        const hash = params[0] as Hash;
        if (!settings.showsByHash) return null;
        const pending = pool.get(hash);
        if (pending) return transactionJson(pending, null);
        const done = mined.get(hash);
        return done ? transactionJson(done, done.blockNumber) : null;
      }
      case 'eth_getTransactionReceipt':
        return receiptOf(params[0] as Hash);
      default:
        throw rpcError({ method: body.method, params }, -32601, `the method ${body.method} does not exist`);
    }
  }

  /** Another transaction of `from`, sent elsewhere, with its next nonce: pending, or mined when automining. */
  function sendOther(from: Address): Hash {
    const nonce = pendingNonceOf(from);
    const tx: NodeTransaction = {
      hash: keccak256(encodeAbiParameters([{ type: 'address' }, { type: 'uint256' }], [from, BigInt(nonce)])),
      from,
      nonce,
      to: from,
      input: '0x',
      raw: null,
    };
    take(tx);
    return tx.hash;
  }

  const transport: CustomTransport = custom({ request }, { retryCount: 0 });
  return {
    transport,
    settings,
    /** Every transaction handed to eth_sendRawTransaction, in order (the same one sent twice appears twice). */
    sends,
    mine,
    sendOther,
    /** The next sends are answered so, in order; those after them as geth would. */
    answerNextSends(...answers: SendAnswer[]) {
      scripted.push(...answers);
    },
    /** `happen` runs as the next eth_sendRawTransaction arrives, before the node looks at it. */
    beforeNextSend(happen: () => void) {
      beforeNextSend = happen;
    },
    /** A pending transaction leaves the pool unmined (evicted, say for its fee). */
    evict(hash: Hash) {
      pool.delete(hash);
    },
    isMined: (hash: Hash) => mined.has(hash),
    minedNonceOf,
  };
}
