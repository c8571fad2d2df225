import {
  BaseError,
  ContractFunctionRevertedError,
  encodeFunctionData,
  getAddress,
  getContractError,
  isAddressEqual,
  keccak256,
  parseEventLogs,
  parseTransaction,
  recoverTransactionAddress,
  RpcRequestError,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
  zeroAddress,
  type Address,
  type Hash,
  type Hex,
  type Transaction,
  type TransactionReceipt,
  type TransactionSerialized,
} from 'viem';
import { forwarderAbi, forwarderFactoryAbi } from './abis.ts';
import type { EvmWriteClients } from './clients.ts';
import { deriveDepositAddress, sessionSaltOf } from './deposit-address.ts';
import { ForwarderFlushError, type FlushRefusal } from './errors.ts';

export type ForwarderFlushRequest = {
  merchantAddress: Address;
  /** The checkout session id (uuid) the deposit address was derived from. */
  sessionId: string;
  /** ERC-20 contracts to sweep (their whole balance). */
  tokens?: readonly Address[];
  /** Sweep the native coin too; true unless given. */
  native?: boolean;
};

/** A flush transaction signed, not sent yet: its hash, and the signed transaction to hand the node (again). */
export type SignedFlush = { transactionHash: Hash; serializedTransaction: Hex };

export type FlushForwardersParameters = {
  factoryAddress: Address;
  requests: readonly ForwarderFlushRequest[];
  /**
   * Called with the signed transaction before it is sent, and awaited: the place to record durably
   * what is about to be broadcast, so that a process killed at any moment after it leaves a record
   * to look the transaction up by (and `serializedTransaction` to send it again, see
   * {@link sendFlushAgain}). If it throws, nothing is sent and its error is thrown as it came.
   */
  beforeSend?: (signed: SignedFlush) => Promise<void>;
  /**
   * How long to wait for the receipt once sent; {@link DEFAULT_RECEIPT_TIMEOUT_MS} unless given.
   * Past it the flush is thrown as sent with its receipt not had: to be looked up by its hash.
   */
  receiptTimeoutMs?: number;
};

/** A sweep's receipt waited for at most this long (viem's own default): a few blocks even on slow chains. */
export const DEFAULT_RECEIPT_TIMEOUT_MS = 180_000;

/** The factory's ABI plus the forwarder's, so reverts inside a forwarder (NativeTransferFailed, ...) are decoded too. */
const factoryAndForwarderAbi = [...forwarderFactoryAbi, ...forwarderAbi] as const;

/** One transfer a forwarder made to its merchant (`token` null for the native coin). */
export type ForwardedTransfer = { forwarder: Address; merchant: Address; token: Address | null; amount: bigint };

export type FlushForwardersReturnType = {
  /** The transaction mined: the flush signed, or a repriced copy of it mined in its place (see `replaces`). */
  transactionHash: Hash;
  /** The flush signed, when a repriced copy of it (the same call, nonce and sender: sped up in a wallet) was mined instead. */
  replaces?: Hash;
  /** The block the transaction is in. */
  blockNumber: bigint;
  gasUsed: bigint;
  /** gasUsed × effective gas price, in wei. */
  gasCost: bigint;
  /** The deposit address of each request, in request order. */
  forwarders: Address[];
  transfers: ForwardedTransfer[];
};

function flushArgsOf(requests: readonly ForwarderFlushRequest[]) {
  return requests.map((request) => ({
    merchant: request.merchantAddress,
    sessionSalt: sessionSaltOf(request.sessionId),
    tokens: [...(request.tokens ?? [])],
    native: request.native ?? true,
  }));
}

/** The call data of `ForwarderFactory.flush` for `requests`: what a sweep sends (Tron prices its bytes as bandwidth). */
export function flushCallData(requests: readonly ForwarderFlushRequest[]): Hex {
  return encodeFunctionData({ abi: factoryAndForwarderAbi, functionName: 'flush', args: [flushArgsOf(requests)] });
}

/**
 * Sweeps deposit addresses in one transaction through `ForwarderFactory.flush`: each forwarder is
 * deployed if needed, then its native coin (unless `native: false`) and `tokens` go to its
 * merchant. Any account may send it; funds only ever reach the merchants.
 *
 * The transaction is prepared (nonce from the node's pending count, gas estimated) and signed
 * first, `beforeSend` is awaited with it, and only then is it sent. Throws
 * {@link ForwarderFlushError}: without a hash when it could not be prepared (a revert at estimate
 * time, the node's error: nothing was signed); with its hash and a `refusal` when the node answered
 * the send with an error and does not have it (see {@link handOver}); with its hash and `paid` when
 * it was mined and reverted; with its hash alone when it was sent, or may have been (the node did
 * not answer), and its receipt could not be had ({@link findFlush} looks it up later). A node that
 * answers that it has the transaction already ("already known", or "nonce too low" with it mined)
 * took it: its receipt is waited for. An error of `beforeSend` is thrown as it came.
 */
export async function flushForwarders(
  clients: EvmWriteClients,
  parameters: FlushForwardersParameters,
): Promise<FlushForwardersReturnType> {
  const { factoryAddress, requests } = parameters;
  if (requests.length === 0)
    throw new ForwarderFlushError('flushForwarders: no requests; pass at least one deposit address to sweep');
  const forwarders = requests.map((request) =>
    deriveDepositAddress({ factoryAddress, merchantAddress: request.merchantAddress, sessionId: request.sessionId }),
  );
  const args = flushArgsOf(requests);

  let signed: SignedFlush;
  try {
    const request = await clients.walletClient.prepareTransactionRequest({
      to: factoryAddress,
      data: flushCallData(requests),
    });
    const serializedTransaction = await clients.walletClient.signTransaction(request);
    signed = { transactionHash: keccak256(serializedTransaction), serializedTransaction };
  } catch (error) {
    // As writeContract does: a revert at estimate time named with the contracts' own errors.
    const decoded = getContractError(error as BaseError, {
      abi: factoryAndForwarderAbi,
      address: factoryAddress,
      args: [args],
      functionName: 'flush',
      sender: clients.walletClient.account.address,
    });
    throw new ForwarderFlushError(
      `sweeping ${requests.length} deposit address(es) through factory ${factoryAddress} was rejected: ${reasonOf(decoded)}. ` +
        'Check that the factory is deployed on this chain, the tokens are ERC-20 contracts and every merchant wallet accepts the funds.',
      undefined,
      undefined,
      { cause: decoded },
    );
  }
  const { transactionHash } = signed;
  await parameters.beforeSend?.(signed);
  let handed: HandOver;
  try {
    handed = await handOver(clients, signed);
  } catch (error) {
    throw new ForwarderFlushError(
      `sweep transaction ${transactionHash} may have been sent: the node did not answer (${reasonOf(error)}). ` +
        'Look it up by its hash, and send it again if the node does not have it, before sweeping these deposit addresses again.',
      transactionHash,
      undefined,
      { cause: error },
    );
  }
  if (handed.kind === 'refused') {
    throw new ForwarderFlushError(`sweep transaction ${transactionHash} ${handed.reason}`, transactionHash, undefined, {
      cause: handed.error,
      refusal: handed.refusal,
    });
  }
  if (handed.kind === 'repriced') return sweptBy(handed.mined, transactionHash, forwarders);
  let receipt: TransactionReceipt;
  let taker: Transaction | undefined;
  try {
    receipt = await clients.publicClient.waitForTransactionReceipt({
      hash: transactionHash,
      timeout: parameters.receiptTimeoutMs ?? DEFAULT_RECEIPT_TIMEOUT_MS,
    });
    // viem answers with the receipt of a transaction that took our nonce in its place.
    if (receipt.transactionHash !== transactionHash)
      taker = await clients.publicClient.getTransaction({ hash: receipt.transactionHash });
  } catch (error) {
    throw new ForwarderFlushError(
      `sweep transaction ${transactionHash} was sent but its receipt could not be had: ${reasonOf(error)}. It may still be mined: look it up by its hash before sweeping these deposit addresses again.`,
      transactionHash,
      undefined,
      { cause: error },
    );
  }
  // The sweep itself when the one that took our nonce is the same call repriced (sped up in a
  // wallet), else no sweep of ours.
  if (taker !== undefined && !isRepricedCopy(parseSigned(signed), taker))
    throw new ForwarderFlushError(
      `sweep transaction ${transactionHash} was replaced by ${receipt.transactionHash}, mined with its nonce; nothing of it moved`,
      transactionHash,
      undefined,
      { refusal: 'nonce-used' },
    );
  return sweptBy(minedFlushOf(receipt), transactionHash, forwarders);
}

/** What `mined` (the flush `signed`, or a repriced copy of it) swept; thrown with its gas when it reverted. */
function sweptBy(mined: MinedFlush, signed: Hash, forwarders: Address[]): FlushForwardersReturnType {
  const { transactionHash, blockNumber, gasUsed, gasCost } = mined;
  const replaces = transactionHash === signed ? {} : { replaces: signed };
  if (mined.reverted) {
    const copy = transactionHash === signed ? '' : `, mined in place of ${signed} (the same call repriced),`;
    throw new ForwarderFlushError(
      `sweep transaction ${transactionHash}${copy} reverted; nothing moved, retry after checking the requests`,
      transactionHash,
      { blockNumber, gasUsed, gasCost },
    );
  }
  return { transactionHash, ...replaces, blockNumber, gasUsed, gasCost, forwarders, transfers: mined.transfers };
}

/**
 * What a node's error answer to eth_sendRawTransaction says of the transaction. No JSON-RPC code
 * tells these apart (geth answers all three with -32000, anvil with -32003), and viem's
 * NonceTooLowError takes "already known" for "nonce too low": the node's words decide, as geth,
 * erigon, reth, anvil, hardhat, Besu, Nethermind and OpenEthereum put them.
 */
export type SendErrorKind = 'already-known' | 'nonce-too-low' | 'replacement-underpriced' | 'other';

const sendErrorWords: readonly (readonly [Exclude<SendErrorKind, 'other'>, RegExp])[] = [
  ['already-known', /already known|already imported|\bknown transaction|existing tx with same hash|AlreadyKnown/i],
  ['nonce-too-low', /nonce too low|nonce is too low|OldNonce|stale nonce/i],
  [
    'replacement-underpriced',
    /replacement transaction underpriced|replacement underpriced|could not replace existing tx|another transaction with (the )?same nonce|ReplacementNotAllowed/i,
  ],
];

/** Words of a node that keeps no state for an older block (not an archive node): it cannot tell, then or later. */
const noHistoryWords =
  /missing trie node|\bpruned\b|archive (node|state)|world state unavailable|historical state (is )?(not available|unavailable)/i;

/** Whether a node's error answer says it keeps no state for the block asked (see `noHistoryWords`). */
export function keepsNoHistory(message: string): boolean {
  return noHistoryWords.test(message);
}

/** The kind of a node's error message (and data) answering eth_sendRawTransaction. */
export function sendErrorKindOf(message: string): SendErrorKind {
  return sendErrorWords.find(([, words]) => words.test(message))?.[0] ?? 'other';
}

/**
 * What the node made of a signed transaction handed to it: took it now, had it already (pending
 * or mined), or did not take it, why (a {@link FlushRefusal}) with its answer.
 */
type HandOver =
  | { kind: 'taken' }
  | { kind: 'had' }
  | { kind: 'repriced'; mined: MinedFlush }
  | { kind: 'refused'; refusal: FlushRefusal; error: unknown; reason: string };

/**
 * Hands `signed` to the node. The hash is known before sending, so an error answer is checked
 * against it: "already known" means the node has this very transaction; otherwise a node that
 * shows it (pending or mined) had it. "nonce too low" is a refusal for good only when the account's
 * mined nonce is past it and neither this transaction nor a repriced copy of it (the same call at
 * another fee) is the one mined with it; "replacement
 * transaction underpriced" leaves it waiting behind the pending one. Throws when the node gave no
 * answer (no connection, a timeout, an HTTP error): it may have the transaction.
 */
async function handOver(clients: EvmWriteClients, signed: SignedFlush): Promise<HandOver> {
  try {
    await clients.walletClient.sendRawTransaction({ serializedTransaction: signed.serializedTransaction });
    return { kind: 'taken' };
  } catch (error) {
    const answered = error instanceof BaseError && error.walk((cause) => cause instanceof RpcRequestError);
    if (!(answered instanceof RpcRequestError)) throw error;
    const said = typeof answered.data === 'string' ? `${answered.details} (${answered.data})` : answered.details;
    const kind = sendErrorKindOf(said);
    // Some nodes (and providers balancing several) do not show a pending transaction by hash.
    if (kind === 'already-known' || (await nodeHasTransaction(clients, signed.transactionHash))) return { kind: 'had' };
    const refused = (refusal: FlushRefusal, reason: string): HandOver => ({ kind: 'refused', refusal, error, reason });
    // Not taken for now, yet it may be mined: what to do about it is the same whatever the reason.
    const held = (reason: string): HandOver =>
      refused(
        'nonce-held',
        `${reason} It may yet be mined: look it up by its hash, and send it again, before sweeping these deposit addresses again.`,
      );
    if (kind === 'replacement-underpriced')
      return held(
        `was not taken by the node: another pending transaction of the account has its nonce (${said}), and may go.`,
      );
    if (kind !== 'nonce-too-low')
      return refused('refused', `was refused by the node, which does not have it: it was never sent (${said})`);
    const { nonce, from } = await nonceAndSenderOf(signed);
    // The mined count first: once past the nonce, the receipt of a transaction mined with it is there.
    const minedCount = await clients.publicClient.getTransactionCount({ address: from, blockTag: 'latest' });
    if ((await findFlush(clients, signed.transactionHash)) !== null) return { kind: 'had' };
    const copy = minedCount > nonce ? await repricedCopyMined(clients, signed) : null;
    if (copy !== null) return { kind: 'repriced', mined: copy };
    if (minedCount > nonce)
      return refused(
        'nonce-used',
        `was refused by the node: its nonce ${nonce} was used by another transaction of ${from}, so it can never be mined (${said})`,
      );
    return held(
      `was not taken by the node, which answered "${said}" yet counts ${minedCount} transaction(s) of ${from} mined, ` +
        `so nonce ${nonce} is not used as far as it shows (its answers disagree).`,
    );
  }
}

async function nonceAndSenderOf(signed: SignedFlush): Promise<{ nonce: number; from: Address }> {
  const serializedTransaction = signed.serializedTransaction as TransactionSerialized;
  const nonce = parseTransaction(serializedTransaction).nonce ?? 0;
  return { nonce, from: await recoverTransactionAddress({ serializedTransaction }) };
}

const parseSigned = (signed: SignedFlush) => parseTransaction(signed.serializedTransaction as TransactionSerialized);

/**
 * Whether `mined` is the signed flush `parsed` repriced: another transaction with its nonce (the
 * sender is the caller's to check) making the same call (target, value, calldata), as a wallet's
 * "speed up" sends it. viem's `onReplaced` calls this `repriced`.
 */
function isRepricedCopy(parsed: ReturnType<typeof parseSigned>, mined: Transaction): boolean {
  return (
    mined.nonce === parsed.nonce &&
    parsed.to != null &&
    mined.to !== null &&
    isAddressEqual(mined.to, parsed.to) &&
    mined.value === (parsed.value ?? 0n) &&
    mined.input === (parsed.data ?? '0x')
  );
}

/**
 * The transaction of `from` mined with `nonce`, or null when none is mined, or the node says it keeps
 * no state that old (see `keepsNoHistory`): it cannot show the account's past nonce counts. The block that mined
 * it is the first whose count is past `nonce`: found stepping back from the newest block, doubling
 * the step, then halving the gap, so a nonce used lately costs few reads. Failures of the node to
 * answer are thrown as viem raises them.
 */
export async function minedWithNonce(
  clients: Pick<EvmWriteClients, 'publicClient'>,
  from: Address,
  nonce: number,
): Promise<Transaction | null> {
  const { publicClient } = clients;
  const usedAt = async (blockNumber: bigint) =>
    (await publicClient.getTransactionCount({ address: from, blockNumber })) > nonce;
  try {
    let used = await publicClient.getBlockNumber({ cacheTime: 0 });
    if (!(await usedAt(used))) return null;
    let unused = used;
    for (let step = 1n; ; step *= 2n) {
      if (used === 0n) return null;
      unused = used > step ? used - step : 0n;
      if (!(await usedAt(unused))) break;
      used = unused;
    }
    while (used - unused > 1n) {
      const middle = (used + unused) / 2n;
      if (await usedAt(middle)) used = middle;
      else unused = middle;
    }
    const block = await publicClient.getBlock({ blockNumber: used, includeTransactions: true });
    return block.transactions.find((tx) => tx.nonce === nonce && isAddressEqual(tx.from, from)) ?? null;
  } catch (error) {
    // A node that keeps no state that old cannot tell; any other error (a rate limit, a backend
    // lagging behind a balancer) is thrown, so the look-up is tried again rather than the sweep missed.
    const answered = error instanceof BaseError && error.walk((cause) => cause instanceof RpcRequestError);
    if (answered instanceof RpcRequestError && keepsNoHistory(answered.details)) return null;
    throw error;
  }
}

/**
 * A repriced copy of the flush `signed` (see {@link isRepricedCopy}) mined with its nonce in its
 * place, as mined; null when none is (its nonce unused, or used by another transaction).
 */
async function repricedCopyMined(
  clients: Pick<EvmWriteClients, 'publicClient'>,
  signed: SignedFlush,
): Promise<MinedFlush | null> {
  const { nonce, from } = await nonceAndSenderOf(signed);
  const taker = await minedWithNonce(clients, from, nonce);
  if (taker === null || taker.hash === signed.transactionHash || !isRepricedCopy(parseSigned(signed), taker))
    return null;
  return minedFlushOf(await clients.publicClient.getTransactionReceipt({ hash: taker.hash }));
}

/** Whether the node knows the transaction `transactionHash`, pending or mined. Node failures are thrown as viem raises them. */
export async function nodeHasTransaction(
  clients: Pick<EvmWriteClients, 'publicClient'>,
  transactionHash: Hash,
): Promise<boolean> {
  try {
    await clients.publicClient.getTransaction({ hash: transactionHash });
    return true;
  } catch (error) {
    if (error instanceof TransactionNotFoundError) return false;
    throw error;
  }
}

/**
 * Makes sure the node has a flush signed earlier (by {@link flushForwarders}, which handed it to
 * `beforeSend`): 'pending' when the node has it already (pending or mined; or a repriced copy of it
 * mined in its place, which {@link findFlush} finds), 'resent' when it did
 * not and took it now, 'waiting' when it did not take it for now (another pending transaction of
 * the account has its nonce: it may yet be mined), 'refused' when it did not and never will (its
 * nonce used by another transaction, the account unable to pay for it): it is then not sent. The
 * very same signed transaction, so it is mined once at most whatever happens. Node failures are
 * thrown as viem raises them.
 */
export async function sendFlushAgain(
  clients: EvmWriteClients,
  signed: SignedFlush,
): Promise<'pending' | 'resent' | 'waiting' | 'refused'> {
  if (keccak256(signed.serializedTransaction) !== signed.transactionHash)
    throw new ForwarderFlushError(
      `sendFlushAgain: the signed transaction given is not ${signed.transactionHash} (its hash is ${keccak256(signed.serializedTransaction)})`,
    );
  if (await nodeHasTransaction(clients, signed.transactionHash)) return 'pending';
  const handed = await handOver(clients, signed);
  if (handed.kind === 'refused') return handed.refusal === 'nonce-held' ? 'waiting' : 'refused';
  // A repriced copy mined in its place: {@link findFlush} given the signed transaction finds it.
  return handed.kind === 'taken' ? 'resent' : 'pending';
}

/** A flush transaction as mined: whether it reverted, its gas, and the transfers it made (none when reverted). */
export type MinedFlush = {
  transactionHash: Hash;
  reverted: boolean;
  blockNumber: bigint;
  gasUsed: bigint;
  gasCost: bigint;
  transfers: ForwardedTransfer[];
};

function minedFlushOf(receipt: TransactionReceipt): MinedFlush {
  const reverted = receipt.status !== 'success';
  const transfers = reverted
    ? []
    : parseEventLogs({ abi: forwarderAbi, eventName: 'Flushed', logs: receipt.logs }).map((log) => ({
        forwarder: getAddress(log.address),
        merchant: log.args.merchant,
        token: log.args.token === zeroAddress ? null : log.args.token,
        amount: log.args.amount,
      }));
  return {
    transactionHash: receipt.transactionHash,
    reverted,
    blockNumber: receipt.blockNumber,
    gasUsed: receipt.gasUsed,
    gasCost: receipt.gasUsed * receipt.effectiveGasPrice,
    transfers,
  };
}

/**
 * The flush `transactionHash` as mined, or null when it is not mined (not yet, or never: dropped
 * or replaced). For a flush whose receipt {@link flushForwarders} could not get. Given the flush
 * as signed (`signed`), a repriced copy of it mined in its place (the same call sped up in a wallet)
 * is the flush mined, under the copy's hash. Node failures are thrown as viem raises them.
 */
export async function findFlush(
  clients: Pick<EvmWriteClients, 'publicClient'>,
  transactionHash: Hash,
  signed?: SignedFlush,
): Promise<MinedFlush | null> {
  try {
    return minedFlushOf(await clients.publicClient.getTransactionReceipt({ hash: transactionHash }));
  } catch (error) {
    if (!(error instanceof TransactionReceiptNotFoundError)) throw error;
  }
  return signed === undefined ? null : repricedCopyMined(clients, signed);
}

/** viem's short message, with the decoded custom error (e.g. `NativeTransferFailed(0x…, 1000)`) when there is one. */
function reasonOf(error: unknown): string {
  if (!(error instanceof BaseError)) return error instanceof Error ? error.message : String(error);
  const reverted = error.walk((cause) => cause instanceof ContractFunctionRevertedError);
  if (reverted instanceof ContractFunctionRevertedError && reverted.data !== undefined) {
    const args = (reverted.data.args ?? []).map((arg) => String(arg)).join(', ');
    return `reverted with ${reverted.data.errorName}(${args})`;
  }
  return error.shortMessage;
}
